//! The `rtbench` command.

fn main() -> std::process::ExitCode {
    rtbench::cli::main()
}
