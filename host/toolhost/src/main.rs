//! The `toolhost` command. Parsing and error-to-exit-code mapping only; each
//! subcommand lives in its own file under `cli/`.

mod cli;

fn main() -> std::process::ExitCode {
    // SAFETY: first thing in `main`, before any other thread exists. May
    // execute this binary again, once, with glibc told not to copy with
    // `REP MOVSB` (see `toolhost::glibc`).
    unsafe { toolhost::glibc::reexec() };
    // SAFETY: restoring the default SIGPIPE disposition happens before any
    // other thread exists, and only changes how a closed stdout ends the
    // process (quietly, as for other command-line tools) instead of a panic
    // in `println!`.
    unsafe {
        let _ = nix::sys::signal::signal(
            nix::sys::signal::Signal::SIGPIPE,
            nix::sys::signal::SigHandler::SigDfl,
        );
    }
    cli::main()
}
