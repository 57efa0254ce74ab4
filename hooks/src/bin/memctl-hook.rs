fn main() -> std::process::ExitCode {
    memctl_hooks::hook::main()
}
