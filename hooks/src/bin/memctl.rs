fn main() -> std::process::ExitCode {
    memctl_hooks::cli::main()
}
