//! Fuzzes the zip container, torch.save loading and torch.jit.save archive loading (modern and
//! legacy `model.json` archives, through the whole module importer).

#![no_main]

use libfuzzer_sys::fuzz_target;
use ts_serialize::{load_torch_save_bytes, InferredClasses, ScriptArchive};

fuzz_target!(|data: &[u8]| {
    let _ = load_torch_save_bytes(data);
    let _ = ts_serialize::load_script_module_bytes(data.to_vec());
    if let Ok(mut archive) = ScriptArchive::from_bytes(data.to_vec()) {
        let _ = archive.load_constants();
        let _ = archive.load_data(&mut InferredClasses::default());
        for file in archive.code_files().iter().map(|s| s.to_string()).collect::<Vec<_>>() {
            let _ = archive.read_code(&file);
        }
    }
});
