fn main() {}

mod support;

mod config;
mod dispatch;
mod example;
mod fixtures;
mod lazy;
mod registry;
mod toolsets;
