//! The program around the server: the command line, the process id file, and the choice of
//! stdio or HTTP.

use std::io::Write;
use std::process::ExitCode;

use crate::{Outcome, Script, http, serve};

/// The program: reads the command line, serves stdin/stdout or HTTP, exits as scripted.
#[must_use]
pub fn main() -> ExitCode {
    let script = match Script::from_args(std::env::args().skip(1)) {
        Ok(script) => script,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "mcppin-fixture: {message}");
            return ExitCode::from(2);
        }
    };
    if let Some(path) = &script.pid_file
        && let Err(err) = std::fs::write(path, std::process::id().to_string())
    {
        let _ = writeln!(
            std::io::stderr(),
            "mcppin-fixture: {}: {err}",
            path.display()
        );
        return ExitCode::from(2);
    }
    if let Some(addr) = script.http.clone() {
        return http::run(script, &addr);
    }
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    let stderr = std::io::stderr().lock();
    match serve(&script, stdin, stdout, stderr) {
        Outcome::Exit(code) => ExitCode::from(code),
        Outcome::Hang => loop {
            std::thread::park();
        },
    }
}
