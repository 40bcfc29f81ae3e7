//! The `toolhost` command. Parsing and error-to-exit-code mapping only; each
//! subcommand lives in its own file under `cli/`.

mod cli;

fn main() -> std::process::ExitCode {
    // SIGPIPE stays ignored (Rust's default): a bridged MCP server or an
    // exec'd command that closes its end of a pipe must never end the
    // process. A reader of our own stdout that goes away (`toolhost tools |
    // head`) ends a command quietly instead: see `cli::out`.
    cli::main()
}
