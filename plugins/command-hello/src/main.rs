//! A plain WASI command: it targets `wasi:cli/command`, not the plugin world.
fn main() {
    println!("Hello, world!");
}
