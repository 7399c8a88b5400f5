//! Fuzzes the pickle machine and the allow-list loading stage: any byte string must give a
//! tree or an error, and loading any tree must give values or an error.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ts_serialize::{unpickle, LoadHooks, ValueLoader};

/// Storages of every key exist and hold 64 zero bytes.
struct FakeStorages;

impl LoadHooks for FakeStorages {
    fn read_storage(&mut self, _key: &str) -> ts_serialize::Result<Vec<u8>> {
        Ok(vec![0; 64])
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(tree) = unpickle(data, "fuzz.pkl") {
        let _ = tree.describe(&tree.root);
        let _ = ValueLoader::new(&tree, "fuzz.pkl", &mut FakeStorages).load_root();
    }
});
