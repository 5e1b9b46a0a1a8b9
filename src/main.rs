//! The `rtbench` command.

// mimalloc instead of the system allocator: corpus mode parses records on every core, and the
// system allocator's cross-thread frees (outcomes are made on the workers and dropped on the
// reporting thread) cost it a fifth of its scaling from one core to two.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    rtbench::main()
}
