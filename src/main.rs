//! iopath command-line program (being built).
fn main() {}
