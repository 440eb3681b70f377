//! How to point the real `codex app-server` at the mock.

/// The codex model provider that talks to the mock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodexProvider {
    /// Key under `model_providers` (and value of `model_provider`). Default `"mock"`.
    pub id: String,
    /// `model`. Default `"mock-model"` (no catalog entry: fallback metadata, a `warning` per
    /// turn, and no `apply_patch` tool). Use a catalog slug such as `"gpt-5.5"` to get the
    /// freeform `apply_patch` tool.
    pub model: String,
    /// `model_providers.<id>.env_key`: the environment variable codex reads the API key from
    /// and sends as `Authorization: Bearer …`. None: codex sends no `Authorization` header.
    pub env_key: Option<String>,
    /// Also pass `features.plugins=false` and `analytics.enabled=false`, which keep codex from
    /// making any non-loopback connection (the curated plugin sync runs `git ls-remote` against
    /// a public host otherwise). Default true.
    pub loopback_only: bool,
}

impl Default for CodexProvider {
    fn default() -> Self {
        Self { id: "mock".to_owned(), model: "mock-model".to_owned(), env_key: None, loopback_only: true }
    }
}

impl CodexProvider {
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    pub fn env_key(mut self, var: impl Into<String>) -> Self {
        self.env_key = Some(var.into());
        self
    }

    /// The `-c` values (each to be passed after its own `-c`) that select this provider with
    /// the mock at `base_url` (`http://127.0.0.1:PORT/v1`). Retries are off so failures are fast.
    pub fn overrides(&self, base_url: &str) -> Vec<String> {
        let p = format!("model_providers.{}", self.id);
        let mut out = vec![
            format!("model_provider={}", toml_str(&self.id)),
            format!("model={}", toml_str(&self.model)),
            format!("{p}.name={}", toml_str("Ensemble mock model")),
            format!("{p}.base_url={}", toml_str(base_url)),
            format!("{p}.wire_api={}", toml_str("responses")),
            format!("{p}.supports_websockets=false"),
            format!("{p}.request_max_retries=0"),
            format!("{p}.stream_max_retries=0"),
        ];
        if let Some(var) = &self.env_key {
            out.push(format!("{p}.env_key={}", toml_str(var)));
        }
        if self.loopback_only {
            out.push("features.plugins=false".to_owned());
            out.push("analytics.enabled=false".to_owned());
        }
        out
    }

    /// `overrides` interleaved with `-c`, ready to append after `codex app-server`.
    pub fn args(&self, base_url: &str) -> Vec<String> {
        self.overrides(base_url).into_iter().flat_map(|o| ["-c".to_owned(), o]).collect()
    }

    /// The same settings as a `config.toml` for `$CODEX_HOME`.
    pub fn config_toml(&self, base_url: &str) -> String {
        let mut s = format!(
            "model = {}\nmodel_provider = {}\n\n[model_providers.{}]\nname = {}\nbase_url = {}\nwire_api = \"responses\"\nsupports_websockets = false\nrequest_max_retries = 0\nstream_max_retries = 0\n",
            toml_str(&self.model),
            toml_str(&self.id),
            self.id,
            toml_str("Ensemble mock model"),
            toml_str(base_url),
        );
        if let Some(var) = &self.env_key {
            s.push_str(&format!("env_key = {}\n", toml_str(var)));
        }
        if self.loopback_only {
            s.push_str("\n[features]\nplugins = false\n\n[analytics]\nenabled = false\n");
        }
        s
    }
}

/// A TOML basic string.
fn toml_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_quote_strings() {
        let o = CodexProvider::default().env_key("MOCK_API_KEY").overrides("http://127.0.0.1:9/v1");
        assert!(o.contains(&"model_provider=\"mock\"".to_owned()));
        assert!(o.contains(&"model_providers.mock.base_url=\"http://127.0.0.1:9/v1\"".to_owned()));
        assert!(o.contains(&"model_providers.mock.env_key=\"MOCK_API_KEY\"".to_owned()));
        assert!(o.contains(&"features.plugins=false".to_owned()));
        assert_eq!(toml_str("a\"b\\c"), "\"a\\\"b\\\\c\"");
    }
}
