//! The boundary tests in Node (the runner's default). `tests/wasm_browser.rs` runs the same
//! tests in headless Chromium.
#![cfg(target_arch = "wasm32")]

mod boundary;
