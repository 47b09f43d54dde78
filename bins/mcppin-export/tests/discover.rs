//! `mcppin-export --discover` on the real binary, against a fake home and project directory:
//! every client location found, absent and unreadable ones, and nothing written.

mod util;

use std::path::Path;

use util::{Dir, Run};

/// Runs `mcppin-export --discover` with HOME at `home/`, the project directory `project/` and
/// the system root `system/` of `dir` (so the machine's own /etc is never read), and nothing
/// else in the environment; a run that hangs fails the test.
fn discover(dir: &Dir, extra: &[(&str, &str)]) -> Run {
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    mcppin_testkit::run(
        std::process::Command::new(env!("CARGO_BIN_EXE_mcppin-export"))
            .arg("--discover")
            .arg("--system-root")
            .arg(dir.path().join("system"))
            .current_dir(&project)
            .env_clear()
            .env("HOME", &home)
            .envs(extra.iter().copied()),
        Vec::new(),
        mcppin_testkit::StdinEnd::Closes,
    )
}

fn servers(ids: &[&str]) -> String {
    let entries: Vec<String> = ids
        .iter()
        .map(|id| format!("{}: {{\"command\": \"x\"}}", util::json_string(id)))
        .collect();
    format!("{{\"mcpServers\": {{{}}}}}", entries.join(", "))
}

fn snapshot_of_tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push((path.display().to_string(), std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn lists_every_client_location_found_with_its_servers() {
    let dir = Dir::new();
    let home = dir.path().join("home");
    let project = dir.path().join("project");
    dir.write(
        "home/.config/Claude/claude_desktop_config.json",
        servers(&["desktop-a", "desktop-b"]),
    );
    dir.write(
        "home/.claude.json",
        r#"{"numStartups": 3, "mcpServers": {"code-user": {"command": "x"}}, "projects": {}}"#,
    );
    dir.write("project/.mcp.json", servers(&["code-project"]));
    dir.write(
        "system/etc/claude-code/managed-mcp.json",
        servers(&["code-managed"]),
    );
    dir.write("home/.cursor/mcp.json", servers(&["cursor-user"]));
    dir.write("project/.cursor/mcp.json", servers(&["cursor-project"]));
    dir.write(
        "home/.config/Code/User/mcp.json",
        r#"{"servers": {"vs-user": {"type": "stdio", "command": "x"}}, "inputs": []}"#,
    );
    dir.write(
        "home/.config/Code/User/settings.json",
        "// settings\n{\"mcp\": {\"servers\": {\"vs-settings\": {\"command\": \"x\"}}},}",
    );
    dir.write(
        "project/.vscode/mcp.json",
        r#"{"servers": {"vs-project": {"command": "x"}}}"#,
    );
    dir.write(
        "home/.codeium/windsurf/mcp_config.json",
        r#"{"mcpServers": {"wind": {"serverUrl": "https://example.invalid/mcp"}}}"#,
    );
    let before = snapshot_of_tree(dir.path());
    let run = discover(&dir, &[]);
    run.code(0);
    assert_eq!(run.stderr, "");
    let h = home.display();
    let p = project.display();
    let s = dir.path().join("system");
    let s = s.display();
    // Each command opens the sessions as the client whose file it is and writes a
    // manifest of its own.
    for (client, path, ids, flags) in [
        (
            "Claude Desktop (user)",
            format!("{h}/.config/Claude/claude_desktop_config.json"),
            "2 servers: \"desktop-a\", \"desktop-b\"",
            "--client claude-desktop -o manifest-claude-desktop-user.json",
        ),
        (
            "Claude Code (managed)",
            format!("{s}/etc/claude-code/managed-mcp.json"),
            "1 server: \"code-managed\"",
            "--client claude-code -o manifest-claude-code-managed.json",
        ),
        (
            "Claude Code (user)",
            format!("{h}/.claude.json"),
            "1 server: \"code-user\"",
            "--client claude-code -o manifest-claude-code-user.json",
        ),
        (
            "Claude Code (project)",
            format!("{p}/.mcp.json"),
            "1 server: \"code-project\"",
            "--client claude-code -o manifest-claude-code-project.json",
        ),
        (
            "Cursor (user)",
            format!("{h}/.cursor/mcp.json"),
            "1 server: \"cursor-user\"",
            "--client cursor -o manifest-cursor-user.json",
        ),
        (
            "Cursor (project)",
            format!("{p}/.cursor/mcp.json"),
            "1 server: \"cursor-project\"",
            "--client cursor -o manifest-cursor-project.json",
        ),
        (
            "VS Code (user)",
            format!("{h}/.config/Code/User/mcp.json"),
            "1 server: \"vs-user\"",
            "--client vscode -o manifest-vscode-user-mcp.json",
        ),
        (
            "VS Code (user)",
            format!("{h}/.config/Code/User/settings.json"),
            "1 server: \"vs-settings\"",
            "--client vscode -o manifest-vscode-user-settings.json",
        ),
        (
            "VS Code (project)",
            format!("{p}/.vscode/mcp.json"),
            "1 server: \"vs-project\"",
            "--client vscode -o manifest-vscode-project.json",
        ),
    ] {
        run.stdout_has(&format!(
            "{client}: {path}\n  {ids}\n  capture: mcppin-export --config {path} {flags}\n"
        ));
    }
    // A remote server is named as such, and captured like the others. Windsurf has no
    // profile: its command declares none.
    run.stdout_has(&format!(
        "Windsurf (user): {h}/.codeium/windsurf/mcp_config.json\n  1 server: \"wind\" (remote)\n  \
         capture: mcppin-export --config {h}/.codeium/windsurf/mcp_config.json -o \
         manifest-windsurf-user.json\n"
    ));
    // The project's local scope in ~/.claude.json: Claude Code has not filed it yet.
    run.stdout_has(&format!(
        "Claude Code (local, {p}): {h}/.claude.json\n  no servers\n"
    ));
    run.stdout_has("11 configurations found, 11 servers\n");
    assert!(!run.stdout.contains("not found"), "{}", run.stdout);
    // Read only: nothing was written, changed or removed.
    assert_eq!(snapshot_of_tree(dir.path()), before);
}

#[test]
fn claude_code_managed_scope_is_read_from_its_system_directory() {
    // Administrators deploy managed-mcp.json to /etc/claude-code (not the user's home); when
    // present it is the only source of servers Claude Code loads.
    let dir = Dir::new();
    let run = discover(&dir, &[]);
    let managed = dir.path().join("system/etc/claude-code/managed-mcp.json");
    run.code(0).stdout_has(&format!(
        "not found:\n  Claude Desktop (user): {}/home/.config/Claude/claude_desktop_config.json\n  \
         Claude Code (managed): {}\n",
        dir.path().display(),
        managed.display()
    ));
    dir.write(
        "system/etc/claude-code/managed-mcp.json",
        r#"{"mcpServers": {"approved": {"command": "a"}, "docs": {"type": "http", "url": "https://docs.example/mcp"}}}"#,
    );
    let m = managed.display();
    discover(&dir, &[]).code(0).stdout_has(&format!(
        "Claude Code (managed): {m}\n  2 servers: \"approved\", \"docs\" (remote)\n  capture: \
         mcppin-export --config {m} --client claude-code -o manifest-claude-code-managed.json\n"
    ));
    // An empty server table, the file that turns MCP off, names no server.
    dir.write(
        "system/etc/claude-code/managed-mcp.json",
        r#"{"mcpServers": {}}"#,
    );
    discover(&dir, &[])
        .code(0)
        .stdout_has(&format!("Claude Code (managed): {m}\n  no servers\n"));
}

#[test]
fn absent_locations_are_listed_as_not_found() {
    let dir = Dir::new();
    dir.write("project/.cursor/mcp.json", servers(&["only"]));
    let run = discover(&dir, &[]);
    run.code(0)
        .stdout_has("Cursor (project): ")
        .stdout_has("1 configuration found, 1 server\n")
        .stdout_has("not found:\n")
        .stdout_has("  Claude Desktop (user): ")
        .stdout_has("  Windsurf (user): ");
    assert_eq!(run.stdout.matches("\n  capture: ").count(), 1);
    let dir = Dir::new();
    discover(&dir, &[])
        .code(0)
        .stdout_has("no client configuration found\n");
}

#[test]
fn unreadable_files_are_reported_and_the_listing_goes_on() {
    let dir = Dir::new();
    // A directory where a file belongs cannot be read, even by root.
    std::fs::create_dir_all(dir.path().join("home/.cursor/mcp.json")).unwrap();
    dir.write("project/.cursor/mcp.json", "{\"mcpServers\": ");
    dir.write("project/.mcp.json", "{\"theme\": \"dark\"}");
    dir.write("project/.vscode/mcp.json", b"\xff\xfe");
    dir.write("home/.claude.json", "{\"numStartups\": 3}");
    dir.write("home/.codeium/windsurf/mcp_config.json", servers(&["fine"]));
    let run = discover(&dir, &[]);
    run.code(0)
        .stdout_has("Cursor (user): ")
        .stdout_has("/home/.cursor/mcp.json\n  cannot be read: ")
        .stdout_has(
            "/project/.cursor/mcp.json\n  cannot be captured: the configuration is not JSON",
        )
        .stdout_has("/project/.mcp.json\n  cannot be captured: no \"mcpServers\"")
        .stdout_has("/project/.vscode/mcp.json\n  cannot be captured: not UTF-8 text")
        .stdout_has("/home/.claude.json\n  no servers\n")
        .stdout_has("1 server: \"fine\"")
        .stdout_has("7 configurations found, 1 server\n");
    assert_eq!(run.stdout.matches("\n  capture: ").count(), 1);
}

#[test]
fn a_configuration_nesting_too_deep_is_listed_and_the_listing_goes_on() {
    // About 12,000 levels aborted the process with a stack overflow.
    let nested = |depth: usize| {
        format!(
            "{{\"mcpServers\": {{\"a\": {{\"command\": \"x\", \"deep\": {}{}}}}}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        )
    };
    let dir = Dir::new();
    dir.write("project/.mcp.json", nested(100_000));
    // Within the bound (64 levels, three of them the server table and the entry).
    dir.write("project/.cursor/mcp.json", nested(61));
    // Settings that are no configuration of their own are read with the same bound.
    dir.write(
        "home/.config/Code/User/settings.json",
        format!("{{\"x\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000)),
    );
    // Claude Code's user file, read for its project's table as well, has the same bound.
    let p = util::json_string(&dir.path().join("project").to_string_lossy());
    dir.write(
        "home/.claude.json",
        format!(
            "{{\"projects\": {{{p}: {{\"mcpServers\": {{\"a\": {{\"deep\": {}{}}}}}}}}}}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        ),
    );
    let run = discover(&dir, &[]);
    assert_eq!(
        run.stdout
            .matches(
                "/home/.claude.json\n  cannot be captured: the configuration nests arrays and \
                 objects deeper than 64 levels"
            )
            .count(),
        2,
        "{}",
        run.stdout
    );
    run.code(0)
        .stdout_has(
            "/project/.mcp.json\n  cannot be captured: the configuration nests arrays and \
             objects deeper than 64 levels (line 1, column 108)\n",
        )
        .stdout_has(
            "/home/.config/Code/User/settings.json\n  cannot be captured: the configuration \
             nests arrays and objects deeper than 64 levels (line 1, column 70)\n",
        )
        .stdout_has("/project/.cursor/mcp.json\n  1 server: \"a\"\n")
        .stdout_has("5 configurations found, 1 server\n");
}

/// Makes a FIFO at `path` with mkfifo (coreutils).
fn mkfifo(path: &Path) {
    let status = mcppin_testkit::status(std::process::Command::new("mkfifo").arg(path))
        .expect("mkfifo (coreutils) must be installed");
    assert!(status.success(), "mkfifo {}", path.display());
}

#[test]
fn files_that_are_no_regular_file_or_too_large_are_listed_and_the_listing_goes_on() {
    // A FIFO without a writer hung the listing forever, a link to /dev/zero
    // grew memory without end.
    let dir = Dir::new();
    std::fs::create_dir_all(dir.path().join("home/.cursor")).unwrap();
    std::fs::create_dir_all(dir.path().join("project/.cursor")).unwrap();
    mkfifo(&dir.path().join("home/.cursor/mcp.json"));
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("project/.mcp.json")).unwrap();
    let max = 4 << 20;
    let padded = format!("{}{}", servers(&["big"]), " ".repeat(max));
    dir.write("project/.cursor/mcp.json", &padded[..max + 1]);
    // At the bound exactly: read.
    dir.write("home/.claude.json", &padded[..max]);
    dir.write("home/.codeium/windsurf/mcp_config.json", servers(&["fine"]));
    let run = discover(&dir, &[]);
    run.code(0)
        .stdout_has("/home/.cursor/mcp.json\n  cannot be read: not a regular file (a FIFO)\n")
        .stdout_has(
            "/project/.mcp.json\n  cannot be read: not a regular file (a character device)\n",
        )
        .stdout_has(
            "/project/.cursor/mcp.json\n  cannot be read: larger than 4194304 bytes, the most a \
             configuration may hold\n",
        )
        .stdout_has("/home/.claude.json\n  1 server: \"big\"\n")
        .stdout_has("/home/.claude.json\n  no servers\n")
        .stdout_has("1 server: \"fine\"")
        .stdout_has("6 configurations found, 2 servers\n");
    assert_eq!(run.stderr, "");
}

#[test]
fn ids_and_paths_are_escaped_and_the_command_is_quoted() {
    let dir = Dir::new();
    dir.write(
        "project/.mcp.json",
        "{\"mcpServers\": {\"\\u001b[31mred<U+0041>\": {\"command\": \"x\"}}}",
    );
    let run = discover(&dir, &[]);
    run.code(0)
        .stdout_has("1 server: \"<U+001B>[31mred<U+003C>U+0041>\"");
    assert!(!run.stdout.contains('\u{1b}'), "{:?}", run.stdout);
    // A home with a space and a quote: the command is one shell word.
    let dir = Dir::new();
    let home = dir.path().join("my home's");
    dir.write("my home's/.cursor/mcp.json", servers(&["a"]));
    let run = discover(&dir, &[("HOME", home.to_str().unwrap())]);
    let quoted = format!("'{}/.cursor/mcp.json'", home.display()).replace("home's", "home'\\''s");
    run.code(0).stdout_has(&format!(
        "capture: mcppin-export --config {quoted} --client cursor -o manifest-cursor-user.json"
    ));
}

#[test]
fn a_configuration_with_remote_servers_gets_a_command_for_all_of_it() {
    let dir = Dir::new();
    dir.write(
        "project/.vscode/mcp.json",
        r#"{"servers": {"web": {"type": "http", "url": "https://example.invalid/mcp"},
            "docs": {"command": "x"}, "it's": {"command": "y"}}}"#,
    );
    let run = discover(&dir, &[]);
    run.code(0)
        .stdout_has("3 servers: \"docs\", \"it's\", \"web\" (remote)\n")
        .stdout_has("/.vscode/mcp.json --client vscode -o manifest-vscode-project.json\n");
}

/// `~/.claude.json` as `claude mcp add` leaves it: a user-scope server, and local-scope servers
/// of two projects (`project/`, the current directory, and `other/`), each a fixture server.
fn claude_json(dir: &Dir) {
    let fixture = util::json_string(&util::fixture().to_string_lossy());
    let p = util::json_string(&dir.path().join("project").to_string_lossy());
    let o = util::json_string(&dir.path().join("other").to_string_lossy());
    std::fs::create_dir_all(dir.path().join("other")).unwrap();
    std::fs::create_dir_all(dir.path().join("project")).unwrap();
    dir.write(
        "home/.claude.json",
        format!(
            r#"{{"numStartups": 7, "mcpServers": {{"everywhere": {{"command": {fixture}}}}},
                "projects": {{
                  {p}: {{"allowedTools": [], "mcpServers": {{"db": {{"command": {fixture}}},
                                                           "search": {{"type": "http", "url": "https://example.invalid/mcp"}}}}}},
                  {o}: {{"mcpServers": {{"other-only": {{"command": {fixture}}}}}}}}}}}"#
        ),
    );
}

#[test]
fn lists_claude_code_local_scope_of_the_project() {
    // `claude mcp add` puts a server in the local scope by default, under the
    // project's path in ~/.claude.json; --discover said "no servers" there.
    let dir = Dir::new();
    claude_json(&dir);
    let h = dir.path().join("home");
    let p = dir.path().join("project");
    let run = discover(&dir, &[]);
    run.code(0)
        .stdout_has(&format!(
            "Claude Code (user): {h}/.claude.json\n  1 server: \"everywhere\"\n  capture: \
             mcppin-export --config {h}/.claude.json --client claude-code -o \
             manifest-claude-code-user.json\n",
            h = h.display()
        ))
        .stdout_has(&format!(
            "Claude Code (local, {p}): {h}/.claude.json\n  2 servers: \"db\", \"search\" \
             (remote)\n  capture: mcppin-export --config {h}/.claude.json --project {p} \
             --client claude-code -o manifest-claude-code-local.json\n",
            h = h.display(),
            p = p.display()
        ))
        .stdout_lacks("other-only");
    // Every suggested command writes its own file.
    let outputs: Vec<&str> = run
        .stdout
        .lines()
        .filter_map(|l| l.rsplit_once(" -o ").map(|(_, o)| o))
        .collect();
    let mut unique = outputs.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(outputs.len(), unique.len(), "{outputs:?}");
}

#[test]
fn project_picks_the_project_of_the_local_scope() {
    let dir = Dir::new();
    claude_json(&dir);
    let o = dir.path().join("other");
    let home = dir.path().join("home");
    let run = mcppin_testkit::run(
        std::process::Command::new(env!("CARGO_BIN_EXE_mcppin-export"))
            .args(["--discover", "--project", "../other", "--system-root"])
            .arg(dir.path().join("system"))
            .current_dir(dir.path().join("project"))
            .env_clear()
            .env("HOME", &home),
        Vec::new(),
        mcppin_testkit::StdinEnd::Closes,
    );
    run.code(0)
        .stdout_has("1 server: \"other-only\"")
        .stdout_has(&format!(
            "Claude Code (local, {o}): {h}/.claude.json\n",
            o = o.display(),
            h = home.display()
        ))
        .stdout_has(&format!("--project {} ", o.display()))
        .stdout_lacks("\"db\"");
}

#[test]
fn exports_the_local_scope_of_a_project() {
    let dir = Dir::new();
    claude_json(&dir);
    let claude = dir.path().join("home/.claude.json");
    let claude = claude.to_str().unwrap();
    // --project from the current directory: the servers `claude mcp add` put there.
    let run = dir.export(&[
        "--config",
        claude,
        "--project",
        "other",
        "--server",
        "other-only",
        "-o",
        "m.json",
    ]);
    run.code(0);
    let manifest = String::from_utf8(dir.read("m.json")).unwrap();
    assert!(manifest.contains("\"other-only\""), "{manifest}");
    assert!(!manifest.contains("\"everywhere\""), "{manifest}");
    // Without --project, the user scope.
    dir.export(&["--config", claude, "-o", "u.json"]).code(0);
    let manifest = String::from_utf8(dir.read("u.json")).unwrap();
    assert!(manifest.contains("\"everywhere\""), "{manifest}");
    assert!(!manifest.contains("\"other-only\""), "{manifest}");
    // A project Claude Code has not filed: exit 4, naming the ones it has.
    dir.export(&["--config", claude, "--project", "nowhere", "-o", "n.json"])
        .code(4)
        .stderr_has(&format!(
            "no project \"{}/nowhere\" under \"projects\" (it has ",
            dir.path().display()
        ))
        .stderr_has(&format!("\"{}/other\"", dir.path().display()));
    // A file without projects is not Claude Code's user file.
    dir.write("mcp.json", servers(&["a"]));
    dir.export(&["--config", "mcp.json", "--project", ".", "-o", "n.json"])
        .code(4)
        .stderr_has("no \"projects\" object");
    assert!(!dir.exists("n.json"));
}

#[test]
fn the_configuration_directory_follows_xdg_config_home() {
    let dir = Dir::new();
    let xdg = dir.path().join("xdg");
    dir.write(
        "xdg/Code/User/mcp.json",
        r#"{"servers": {"x": {"command": "x"}}}"#,
    );
    let run = discover(&dir, &[("XDG_CONFIG_HOME", xdg.to_str().unwrap())]);
    run.code(0).stdout_has(&format!(
        "VS Code (user): {}/Code/User/mcp.json\n",
        xdg.display()
    ));
}

#[test]
fn discover_takes_no_configuration_and_needs_a_home() {
    let dir = Dir::new();
    dir.write("mcp.json", servers(&["a"]));
    dir.export(&["--discover", "--config", "mcp.json"]).code(2);
    dir.export(&["--discover", "-o", "m.json"]).code(2);
    // Without HOME there is no user location to look at.
    dir.export(&["--discover"])
        .code(2)
        .stderr_has("--discover needs HOME");
}
