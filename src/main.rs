//! The `argon-sandbox` binary: parses the command line and hands over to [`argon_sandbox::cli`].

fn main() -> std::process::ExitCode {
    argon_sandbox::cli::main()
}
