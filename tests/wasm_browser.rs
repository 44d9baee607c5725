//! The boundary tests in a browser: `run_in_browser` makes the runner (and
//! `wasm-pack test --headless --chrome`) run them in headless Chromium rather than skip them.
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

mod boundary;
