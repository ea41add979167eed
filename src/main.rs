fn main() {
    std::process::exit(ripples::cli::main());
}
