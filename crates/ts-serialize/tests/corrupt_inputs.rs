//! Corrupt, truncated and hostile inputs give clear errors, never panics or huge allocations.

mod support;

use proptest::prelude::*;
use support::fixture;
use ts_serialize::opcodes as op;
use ts_serialize::pickler::Pickler;
use ts_serialize::{
    load_torch_save_bytes, unpickle, ArchiveWriter, InferredClasses, ScriptArchive, SerializeError,
};

fn read_fixture(name: &str) -> Vec<u8> {
    std::fs::read(fixture(&format!("torch/{name}"))).unwrap()
}

/// A torch.save archive with the given `data.pkl` and storage records.
fn archive(data_pkl: &[u8], storages: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = ArchiveWriter::new("archive").unwrap();
    w.write_record("data.pkl", data_pkl).unwrap();
    for (name, bytes) in storages {
        w.write_record(name, bytes).unwrap();
    }
    w.write_record("version", b"3\n").unwrap();
    w.finish().unwrap()
}

/// The pickle of `_rebuild_tensor_v2(storage('0', FloatStorage, numel), 0, sizes, strides)`.
fn tensor_pickle(numel: i64, sizes: &[i64], strides: &[i64]) -> Vec<u8> {
    let mut p = Pickler::new();
    p.global("torch._utils", "_rebuild_tensor_v2");
    p.tuple_start(6);
    p.tuple_start(5);
    p.str("storage");
    p.global("torch", "FloatStorage");
    p.str("0");
    p.str("cpu");
    p.int(numel);
    p.tuple_end(5);
    p.opcode(op::BINPERSID);
    p.int(0);
    for dims in [sizes, strides] {
        p.tuple_start(dims.len());
        for &d in dims {
            p.int(d);
        }
        p.tuple_end(dims.len());
    }
    p.bool(false);
    p.global("collections", "OrderedDict");
    p.tuple_start(0);
    p.opcode(op::REDUCE);
    p.tuple_end(6);
    p.opcode(op::REDUCE);
    p.finish()
}

#[test]
fn a_well_formed_hand_made_file_loads() {
    let data = archive(&tensor_pickle(2, &[2], &[1]), &[("data/0", &[0u8; 8])]);
    load_torch_save_bytes(&data).unwrap();
}

#[test]
fn truncated_zips() {
    for name in ["save_views.pt", "script_attrs.pt"] {
        let bytes = read_fixture(name);
        for len in 0..bytes.len() {
            let r = load_torch_save_bytes(&bytes[..len]);
            assert!(r.is_err(), "{name} truncated to {len} bytes loaded");
            let _ = ScriptArchive::from_bytes(bytes[..len].to_vec());
        }
    }
    let err = load_torch_save_bytes(b"PK\x03\x04").unwrap_err();
    assert!(matches!(err, SerializeError::Zip { .. }), "{err}");
    let err = load_torch_save_bytes(b"").unwrap_err();
    assert!(err.to_string().contains("zip"), "{err}");
}

#[test]
fn truncated_pickles() {
    let pickle = tensor_pickle(2, &[2], &[1]);
    for len in 0..pickle.len() {
        let data = archive(&pickle[..len], &[("data/0", &[0u8; 8])]);
        let err = load_torch_save_bytes(&data).unwrap_err().to_string();
        assert!(err.starts_with("data.pkl: "), "{err}");
    }
}

#[test]
fn wrong_storage_sizes_name_the_record() {
    let data = archive(&tensor_pickle(2, &[2], &[1]), &[("data/0", &[0u8; 7])]);
    let err = load_torch_save_bytes(&data).unwrap_err().to_string();
    assert!(
        err.starts_with("data/0: ") && err.contains("7 bytes"),
        "{err}"
    );

    let data = archive(&tensor_pickle(2, &[2], &[1]), &[]);
    let err = load_torch_save_bytes(&data).unwrap_err().to_string();
    assert!(
        err.starts_with("data/0: ") && err.contains("lacks"),
        "{err}"
    );

    // A tensor reaching past the end of its storage.
    let data = archive(&tensor_pickle(2, &[3], &[1]), &[("data/0", &[0u8; 8])]);
    let err = load_torch_save_bytes(&data).unwrap_err().to_string();
    assert!(
        err.contains("data/0") && err.contains("out of bounds"),
        "{err}"
    );

    // Sizes whose element count overflows.
    let data = archive(
        &tensor_pickle(2, &[1 << 40, 1 << 40], &[1, 1]),
        &[("data/0", &[0u8; 8])],
    );
    assert!(load_torch_save_bytes(&data).is_err());
}

#[test]
fn huge_claimed_lengths() {
    // A storage claiming 2^62 elements is compared with its record, never allocated.
    let data = archive(
        &tensor_pickle(1 << 62, &[2], &[1]),
        &[("data/0", &[0u8; 8])],
    );
    let err = load_torch_save_bytes(&data).unwrap_err().to_string();
    assert!(err.contains("data/0"), "{err}");
    for pickle in [
        &b"\x80\x02X\xf0\xff\xff\xff"[..],
        b"\x80\x02\x8d\xff\xff\xff\xff\xff\xff\xff\xff",
        b"\x80\x02\x8e\x00\x00\x00\x00\x00\x00\x00\x10",
        b"\x80\x02\x8b\xff\xff\xff\x7f",
        b"\x80\x02\x95\x00\x00\x00\x00\x00\x00\x00\x01N.",
        b"\x80\x02r\xff\xff\xff\xff.",
    ] {
        let err = unpickle(pickle, "data.pkl").unwrap_err();
        assert!(matches!(err, SerializeError::Pickle { .. }), "{err}");
    }
}

/// Pickles that would run code in Python are refused by name.
#[test]
fn dangerous_globals_are_refused() {
    let mut cases: Vec<(Vec<u8>, &str)> = Vec::new();
    // os.system('ls') via GLOBAL + REDUCE
    cases.push((
        b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00ls\x85R.".to_vec(),
        "os.system",
    ));
    // builtins.eval via STACK_GLOBAL (protocol 4)
    cases.push((
        b"\x80\x04\x8c\x08builtins\x8c\x04eval\x93\x8c\x011\x85R.".to_vec(),
        "builtins.eval",
    ));
    // subprocess.Popen via NEWOBJ, nested in a list
    cases.push((
        b"\x80\x02](csubprocess\nPopen\n)\x81e.".to_vec(),
        "subprocess.Popen",
    ));
    // A global used as a storage class inside a persistent id.
    let mut p = Pickler::new();
    p.global("torch._utils", "_rebuild_tensor_v2");
    p.tuple_start(6);
    p.tuple_start(5);
    p.str("storage");
    p.global("posix", "system");
    p.str("0");
    p.str("cpu");
    p.int(1);
    p.tuple_end(5);
    p.opcode(op::BINPERSID);
    p.int(0);
    for _ in 0..2 {
        p.int(1);
        p.tuple_end(1);
    }
    p.bool(false);
    p.none();
    p.tuple_end(6);
    p.opcode(op::REDUCE);
    cases.push((p.finish(), "posix.system"));
    // A bare dangerous global as a value.
    cases.push((b"\x80\x02cbuiltins\nexec\n.".to_vec(), "builtins.exec"));
    for (pickle, name) in cases {
        let err = load_torch_save_bytes(&archive(&pickle, &[("data/0", &[0u8; 4])])).unwrap_err();
        assert!(
            matches!(err, SerializeError::UnknownGlobal { .. }),
            "{name}: {err}"
        );
        assert!(err.to_string().contains(&format!("'{name}'")), "{err}");
    }
}

#[test]
fn hostile_structures() {
    // 60 levels of tuples, each holding the previous one twice: 2^60 leaves if expanded.
    let mut p = Pickler::new();
    p.int(1);
    for _ in 0..60 {
        p.opcode(op::DUP);
        p.tuple_end(2);
    }
    let v = load_torch_save_bytes(&archive(&p.finish(), &[])).unwrap();
    assert!(matches!(v, ts_core::IValue::Tuple(_)));

    // Nesting within the limit loads.
    let mut ok = b"\x80\x02".to_vec();
    ok.extend(std::iter::repeat_n(b']', 150));
    ok.extend(std::iter::repeat_n(b'a', 149));
    ok.push(b'.');
    load_torch_save_bytes(&archive(&ok, &[])).unwrap();

    // Deep nesting is refused, not a stack overflow.
    let mut deep = b"\x80\x02".to_vec();
    deep.extend(std::iter::repeat_n(b']', 100_000));
    deep.extend(std::iter::repeat_n(b'a', 99_999));
    deep.push(b'.');
    let err = load_torch_save_bytes(&archive(&deep, &[])).unwrap_err();
    assert!(err.to_string().contains("nested"), "{err}");

    // A type tag nested too deeply.
    let tag = "List[".repeat(10_000) + "int" + &"]".repeat(10_000);
    let mut p = Pickler::new();
    p.global("torch.jit._pickle", "restore_type_tag");
    p.opcode(op::EMPTY_LIST);
    p.str(&tag);
    p.tuple_end(2);
    p.opcode(op::REDUCE);
    let err = load_torch_save_bytes(&archive(&p.finish(), &[])).unwrap_err();
    assert!(err.to_string().contains("deeper"), "{err}");

    // A type tag that does not match its value.
    let mut p = Pickler::new();
    p.global("torch.jit._pickle", "restore_type_tag");
    p.opcode(op::EMPTY_LIST);
    p.str("x");
    p.opcode(op::APPEND);
    p.str("List[int]");
    p.tuple_end(2);
    p.opcode(op::REDUCE);
    let err = load_torch_save_bytes(&archive(&p.finish(), &[])).unwrap_err();
    assert!(err.to_string().contains("tagged as int"), "{err}");
}

#[test]
fn bad_version_records() {
    let mut bytes = Vec::new();
    for (version, ok) in [("3\n", true), ("11\n", false), ("0", false), ("x", false)] {
        let mut w = ArchiveWriter::new("m").unwrap();
        w.write_record("data.pkl", b"\x80\x02N.").unwrap();
        w.write_record("code/__torch__.py", b"").unwrap();
        w.write_record("version", version.as_bytes()).unwrap();
        bytes = w.finish().unwrap();
        let r = ScriptArchive::from_bytes(bytes.clone());
        assert_eq!(r.is_ok(), ok, "version {version:?}: {r:?}");
    }
    let mut w = ArchiveWriter::new("m").unwrap();
    w.write_record("model.json", b"{}").unwrap();
    w.write_record("version", b"1").unwrap();
    let err = ScriptArchive::from_bytes(w.finish().unwrap()).unwrap_err();
    assert!(err.to_string().contains("model.json"), "{err}");
    drop(bytes);
}

fn mutate(mut bytes: Vec<u8>, edits: &[(usize, u8)], cut: Option<usize>) -> Vec<u8> {
    if bytes.is_empty() {
        return bytes;
    }
    for &(pos, b) in edits {
        let i = pos % bytes.len();
        bytes[i] = b;
    }
    if let Some(c) = cut {
        bytes.truncate(c % (bytes.len() + 1));
    }
    bytes
}

fn load_everything(bytes: &[u8]) {
    let _ = load_torch_save_bytes(bytes);
    if let Ok(mut a) = ScriptArchive::from_bytes(bytes.to_vec()) {
        let _ = a.load_constants();
        let _ = a.load_data(&mut InferredClasses::default());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    /// Byte edits of real pickles (re-wrapped in a valid zip, so the pickle machine and the
    /// loader see them) and of whole archives never panic.
    #[test]
    fn mutated_real_files_never_panic(
        file in prop::sample::select(vec!["save_state_dict.pt", "save_protocol4.pt", "script_attrs.pt", "save_misc.pt"]),
        edits in prop::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        cut in prop::option::of(any::<usize>()),
    ) {
        let bytes = read_fixture(file);
        let mut a = ts_serialize::Archive::from_bytes(bytes.clone()).unwrap();
        let names: Vec<String> = a.records().to_vec();
        let mut w = ArchiveWriter::new(a.name()).unwrap();
        for name in &names {
            let mut data = a.read_record(name).unwrap();
            if name.ends_with(".pkl") {
                data = mutate(data, &edits, cut);
            }
            if name != ".data/serialization_id" {
                w.write_record(name, &data).unwrap();
            }
        }
        load_everything(&w.finish().unwrap());
        load_everything(&mutate(bytes, &edits, cut));
    }
}

/// The decompression budget of one load is the library user's to set: a budget below the
/// records' total refuses the load before inflating, a sufficient one loads it.
#[test]
fn inflation_budget_is_settable_and_enforced() {
    let bytes = read_fixture("save_state_dict.pt");
    let mut tight = ts_serialize::Archive::from_bytes(bytes.clone())
        .unwrap()
        .with_inflate_budget(16);
    let e = ts_serialize::load_from_archive(&mut tight).unwrap_err();
    assert!(e.to_string().contains("budget"), "{e}");
    assert_eq!(tight.inflated_bytes(), 0);
    let mut ample = ts_serialize::Archive::from_bytes(bytes)
        .unwrap()
        .with_inflate_budget(1 << 30);
    ts_serialize::load_from_archive(&mut ample).unwrap();
    assert!(ample.inflated_bytes() > 0);
}
