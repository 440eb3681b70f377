//! The bench's options: `--name value` arguments or `FANOUT_NAME` environment variables (see the
//! list in `main.rs`).

#[derive(Clone, Debug)]
pub struct Opts {
    pub subs: Vec<usize>,
    pub events: Option<u64>,
    pub runs: usize,
    pub latency_secs: u64,
    pub rate: u64,
    pub latency_subs: usize,
    pub ensemble: bool,
    pub durable: bool,
    pub baseline: bool,
    pub srv_threads: usize,
    pub cli_threads: usize,
    pub window: u64,
    pub client_read_buf: usize,
    pub nodelay: bool,
}

impl Opts {
    pub fn parse() -> Opts {
        let mut o = Opts {
            subs: vec![1, 10, 100],
            events: None,
            runs: 3,
            latency_secs: 10,
            rate: 1000,
            latency_subs: 100,
            ensemble: true,
            durable: true,
            baseline: true,
            srv_threads: 2,
            cli_threads: 2,
            window: 2048,
            client_read_buf: 16 * 1024,
            nodelay: true,
        };
        let mut pairs: Vec<(String, String)> = Vec::new();
        for (k, v) in std::env::vars() {
            if let Some(name) = k.strip_prefix("FANOUT_") {
                pairs.push((name.to_ascii_lowercase().replace('_', "-"), v));
            }
        }
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            match a.as_str() {
                // `cargo bench` passes `--bench` to every bench binary.
                "--bench" => {}
                flag if flag.starts_with("--") => {
                    let name = flag.trim_start_matches("--").to_owned();
                    let value = args.next().unwrap_or_else(|| panic!("{flag} needs a value"));
                    pairs.push((name, value));
                }
                // A positional filter as cargo bench would pass it: ignored.
                other => eprintln!("fanout: ignoring argument `{other}`"),
            }
        }
        for (name, v) in pairs {
            let num = |v: &str| v.trim().parse::<u64>().unwrap_or_else(|_| panic!("--{name}: not a number: {v}"));
            match name.as_str() {
                "subs" => o.subs = v.split(',').filter(|s| !s.trim().is_empty()).map(|s| num(s) as usize).collect(),
                "events" => o.events = Some(num(&v).max(1)),
                "runs" => o.runs = num(&v).max(1) as usize,
                "latency-secs" => o.latency_secs = num(&v),
                "rate" => o.rate = num(&v).max(1),
                "latency-subs" => o.latency_subs = num(&v).max(1) as usize,
                "only" => {
                    let names: Vec<&str> = v.split(',').map(str::trim).collect();
                    for n in &names {
                        if !["ensemble", "durable", "memory", "baseline"].contains(n) {
                            panic!("--only: a list of ensemble, durable, memory");
                        }
                    }
                    o.ensemble = names.contains(&"ensemble");
                    o.durable = names.contains(&"durable");
                    o.baseline = names.contains(&"memory") || names.contains(&"baseline");
                }
                "srv-threads" => o.srv_threads = num(&v).max(1) as usize,
                "cli-threads" => o.cli_threads = num(&v).max(1) as usize,
                "window" => o.window = num(&v).max(64),
                "client-read-buf" => o.client_read_buf = num(&v).max(512) as usize,
                "nodelay" => o.nodelay = !matches!(v.as_str(), "" | "0" | "false"),
                _ => eprintln!("fanout: unknown option --{name}"),
            }
        }
        o
    }

    /// Events of a throughput scenario: ~5M deliveries, 50k..300k events.
    pub fn events_for(&self, subs: usize) -> u64 {
        self.events.unwrap_or_else(|| (5_000_000 / subs.max(1) as u64).clamp(50_000, 300_000))
    }
}
