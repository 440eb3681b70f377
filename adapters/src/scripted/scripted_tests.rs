//! The scripted agent's input language and streaming helpers.

use super::directives::{Directive, parse};
use super::turn::{answer_text, split_words};

#[test]
fn parses_directives_and_text() {
    let d = parse("hello there\n/tool grep -n foo\n/run ls -la\n/ask Which color?\n/slow 5\n/bogus x\n\n/fail boom");
    assert_eq!(
        d,
        vec![
            Directive::Say("hello there".into()),
            Directive::Tool { name: "grep".into(), args: "-n foo".into() },
            Directive::Run("ls -la".into()),
            Directive::Ask("Which color?".into()),
            Directive::Slow(5),
            Directive::Unknown("/bogus x".into()),
            Directive::Fail("boom".into()),
        ]
    );
    assert_eq!(parse("/slow fast"), vec![Directive::Unknown("/slow fast".into())]);
    assert_eq!(parse("/plan a; b ;; c"), vec![Directive::Plan(vec!["a".into(), "b".into(), "c".into()])]);
}

#[test]
fn words_concatenate_back() {
    let text = "one two  three\nfour";
    assert_eq!(split_words(text).concat(), text);
    assert_eq!(split_words("a b").len(), 2);
}

#[test]
fn answers_in_both_shapes() {
    assert_eq!(answer_text(Some(&serde_json::json!({"answer": "blue"}))), "blue");
    assert_eq!(answer_text(Some(&serde_json::json!({"answer": {"answers": ["red", "green"]}}))), "red, green");
    assert_eq!(answer_text(None), "");
}
