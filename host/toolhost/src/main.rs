//! The `toolhost` command. Parsing and error-to-exit-code mapping only; each
//! subcommand lives in its own file under `cli/`.

mod cli;

fn main() -> std::process::ExitCode {
    // The commands that run for long and copy tools' payloads may execute
    // this binary again, once, with glibc told not to copy with `REP MOVSB`
    // (see `toolhost::glibc`); the others would spend more on starting
    // twice (about 2.5 ms) than they could save.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|command| command == "serve" || command == "bench")
    {
        // SAFETY: first thing in `main`, before any other thread exists.
        unsafe { toolhost::glibc::reexec() };
    }
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
