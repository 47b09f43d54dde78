//! What the wire engine pays, in process and without pipes, for the first `tools/list` answer
//! of a session: 1,000 approved tools (the answer of the guard's own bench, about 357 KB). Each
//! stage the engine goes through is timed alone (the comparison of each served tool with its
//! approved form stands in for its digest when the two are equal), then the whole answer
//! through a fresh `Session`, beside serde_json reading the same bytes into its `Value` (a
//! reference floor for a reading that builds a tree). Run with
//! `cargo bench -p mcppin-core --bench engine`; prints the best time of each row over
//! interleaved rounds, its ratio to serde_json's, and its median.
//! `-- --only TEXT` times the rows whose name holds TEXT (and the reference), to profile one
//! stage; `-- --first` times the first three answers a fresh process judges, with the page
//! faults each took; `-- --idle MS` sleeps MS milliseconds before each timed run, as a guard's
//! reading thread waits for the server's answer (docs/performance.md, "An idle processor").

use std::hint::black_box;
use std::time::{Duration, Instant};

use mcppin_core::engine::{ApprovedServer, Config, Forward, Session};
use mcppin_core::lockfile::{LockedItem, LockedServer};
use mcppin_core::outline::Outline;
use mcppin_core::{Value, digest, parse};

const TOOLS: usize = 1000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let rounds = if args.iter().any(|a| a == "--bench") {
        200
    } else {
        3
    };
    let tools = mcppin_testkit::bench_tools(TOOLS);
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{}]}}}}"#,
        tools.join(",")
    )
    .into_bytes();
    let approved_forms: Vec<Value> = tools
        .iter()
        .map(|tool| parse(tool.as_bytes()).expect("tool"))
        .collect();
    let served = parse(&answer).expect("strict");
    let approved = ApprovedServer::unsigned(approved(&approved_forms));

    let rows: [(&str, &dyn Fn() -> usize); 6] = [
        ("serde_json::from_slice::<Value> (reference)", &|| {
            let v: serde_json::Value = serde_json::from_slice(&answer).expect("serde_json");
            usize::from(v.is_object())
        }),
        ("outline (routing read)", &|| {
            let outline = Outline::parse(&answer, 2).expect("outline");
            usize::from(outline.root().is_outlined())
        }),
        ("strict read", &|| {
            usize::from(parse(&answer).expect("strict").is_null())
        }),
        ("strict read + 1,000 digests", &|| {
            tools_of(&parse(&answer).expect("strict"))
                .iter()
                .map(|tool| usize::from(digest(tool).expect("digest").as_bytes()[0]))
                .sum()
        }),
        ("1,000 tools compared with their approved forms", &|| {
            tools_of(&served)
                .iter()
                .zip(&approved_forms)
                .filter(|(tool, approved)| approved == tool)
                .count()
        }),
        (
            "session: the answer judged (fresh session, the reading freed)",
            &|| {
                let mut session = Session::new(approved.clone(), config());
                let _ = session.client_line(
                    br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
                    Duration::ZERO,
                );
                let action = session.server_line(&answer, Duration::ZERO);
                assert!(
                    matches!(action.to_client, Forward::Original),
                    "the approved answer is forwarded whole"
                );
                usize::from(session.is_stopped())
            },
        ),
    ];
    if args.iter().any(|a| a == "--first") {
        // The first answer this process judges, its heap and caches cold: run it a few times
        // as separate processes to see what a fresh guard's first list pays.
        for label in ["first", "second", "third"] {
            let (faults, start) = (minor_faults(), Instant::now());
            black_box(rows[5].1());
            println!(
                "{label} judged answer of the process: {:.3} ms, {} page faults",
                ms(start.elapsed()),
                minor_faults() - faults
            );
        }
        return;
    }
    // `-- --only TEXT` times only the rows whose name holds TEXT (to profile one stage).
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1));
    // `-- --idle MS`: each timed run starts on a processor left idle, as the guard's is.
    let idle = args
        .iter()
        .position(|a| a == "--idle")
        .and_then(|i| args.get(i + 1))
        .and_then(|ms| ms.parse().ok())
        .map(Duration::from_millis);
    let mut times = vec![Vec::new(); rows.len()];
    for _ in 0..rounds {
        for (row, ((name, run), times)) in rows.iter().zip(&mut times).enumerate() {
            // The reference row always runs: the ratios are to it.
            if row > 0 && only.is_some_and(|only| !name.contains(only.as_str())) {
                times.push(Duration::ZERO);
                continue;
            }
            if let Some(idle) = idle {
                std::thread::sleep(idle);
            }
            let start = Instant::now();
            black_box(run());
            times.push(start.elapsed());
        }
    }
    let medians: Vec<Duration> = times.iter().map(|t| median(t.clone())).collect();
    let bests: Vec<Duration> = times.into_iter().map(best).collect();
    println!(
        "wire engine, one {TOOLS}-tool tools/list answer ({} bytes): best and median of \
         {rounds} interleaved rounds",
        answer.len()
    );
    println!("| stage | ms | ratio to serde_json | median ms |");
    println!("|---|---:|---:|---:|");
    for (((name, _), time), median) in rows.iter().zip(&bests).zip(&medians) {
        println!(
            "| {name} | {:.3} | {:.2} | {:.3} |",
            ms(*time),
            time.as_secs_f64() / bests[0].as_secs_f64(),
            ms(*median)
        );
    }
}

/// The minor page faults of this process so far (`/proc/self/stat`, field 10).
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The command name (field 2) may hold spaces; the fields after its `)` are plain.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    after
        .split_whitespace()
        .nth(7)
        .and_then(|f| f.parse().ok())
        .unwrap_or(0)
}

/// The tools of a `tools/list` answer.
fn tools_of(answer: &Value) -> &[Value] {
    answer
        .get("result")
        .and_then(|r| r.get("tools"))
        .and_then(Value::as_array)
        .expect("tools")
}

fn ms(time: Duration) -> f64 {
    time.as_secs_f64() * 1000.0
}

fn config() -> Config {
    let mut config = Config::default();
    config.refuser = "mcppin-guard";
    config
}

/// The best time of a row: the work is the same every round, so the least disturbed round
/// shows its cost best on a shared machine.
fn best(times: Vec<Duration>) -> Duration {
    times.into_iter().min().unwrap_or_default()
}

/// The median time of a row.
fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

fn approved(tools: &[Value]) -> LockedServer {
    let mut server = LockedServer::default();
    for tool in tools {
        let name = tool.get("name").and_then(Value::as_str).expect("name");
        server
            .tools
            .insert(name.to_owned(), LockedItem::approve(tool.clone()));
    }
    server
}
