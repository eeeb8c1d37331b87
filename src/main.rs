fn main() -> std::process::ExitCode {
    cairn::main()
}
