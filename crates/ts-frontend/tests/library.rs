//! The TorchScript-written library (functionals and builtin overloads) compiles.

#[test]
fn library_compiles() {
    if let Some(e) = ts_frontend::emitter::library::library_error() {
        panic!("{e}");
    }
}
