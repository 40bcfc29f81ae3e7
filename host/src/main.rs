//! The `toolhost` command. Parsing and error-to-exit-code mapping only; each
//! subcommand lives in its own file under `cli/`.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
