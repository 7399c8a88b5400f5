//! Loading from a file maps stored tensor records copy-on-write instead of copying them:
//! writes to a loaded tensor never reach the file, saving over a loaded file leaves the loaded
//! tensors alone, misaligned or compressed records fall back to copying, and damaged files are
//! refused with an error.

use std::io::{Read, Write};
use std::path::PathBuf;

use ts_core::IValue;
use ts_serialize::file_replace::replace_file;
use ts_serialize::{load_torch_save, save_torch_save, save_torch_save_bytes};
use ts_tensor::{Scalar, Tensor};

fn temp_path(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "ts-serialize-mapped-{tag}-{}.pt",
        std::process::id()
    ))
}

fn tensor_of(v: &IValue) -> Tensor {
    match v {
        IValue::Tensor(t) => t.clone(),
        other => panic!("expected a tensor, got {}", other.tag_name()),
    }
}

fn values() -> Vec<f32> {
    (0..1000).map(|i| i as f32 * 0.5).collect()
}

fn saved_tensor(tag: &str) -> PathBuf {
    let path = temp_path(tag);
    let t = Tensor::from_vec(values(), &[1000]).expect("tensor");
    save_torch_save(&IValue::Tensor(t), &path).expect("save");
    path
}

#[test]
fn aligned_records_are_mapped_and_writes_stay_private() {
    let path = saved_tensor("cow");
    let before = std::fs::read(&path).expect("read");
    let t = tensor_of(&load_torch_save(&path).expect("load"));
    assert!(
        t.storage().is_external(),
        "a stored, aligned record is mapped"
    );
    assert_eq!(t.to_vec::<f32>(), values());
    t.fill_(Scalar::Float(7.0)).expect("fill");
    assert!(t.to_vec::<f32>().iter().all(|&x| x == 7.0));
    assert_eq!(
        std::fs::read(&path).expect("read"),
        before,
        "the file is unchanged"
    );
    let again = tensor_of(&load_torch_save(&path).expect("reload"));
    assert_eq!(again.to_vec::<f32>(), values());
    let _ = std::fs::remove_file(&path);
}

#[test]
fn loaded_tensors_survive_the_file_being_removed_or_saved_over() {
    let path = saved_tensor("over");
    let t = tensor_of(&load_torch_save(&path).expect("load"));
    // Saving replaces the file (a rename over it), so the mapped pages keep the old bytes.
    let other = Tensor::from_vec(vec![1.0f32; 10], &[10]).expect("tensor");
    save_torch_save(&IValue::Tensor(other), &path).expect("save over");
    assert_eq!(t.to_vec::<f32>(), values());
    assert_eq!(
        tensor_of(&load_torch_save(&path).expect("load new")).to_vec::<f32>(),
        vec![1.0f32; 10]
    );
    std::fs::remove_file(&path).expect("remove");
    assert_eq!(t.to_vec::<f32>(), values());
}

/// Rewrites the archive with a padding record before the others, stored without alignment,
/// so that the data record starts `shift` bytes further on.
fn rewrite_unaligned(bytes: &[u8], pad: usize) -> Vec<u8> {
    let mut src = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).expect("zip");
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let first = src
        .by_index(0)
        .expect("entry")
        .name()
        .expect("name")
        .into_owned();
    let folder = first.split('/').next().expect("folder").to_owned();
    out.start_file(format!("{folder}/pad"), opts)
        .expect("start");
    out.write_all(&vec![0u8; pad]).expect("pad");
    for i in 0..src.len() {
        let mut f = src.by_index(i).expect("entry");
        let name = f.name().expect("name").into_owned();
        let mut data = Vec::new();
        f.read_to_end(&mut data).expect("read");
        out.start_file(name, opts).expect("start");
        out.write_all(&data).expect("write");
    }
    out.finish().expect("finish").into_inner()
}

fn data_offset(bytes: &[u8]) -> u64 {
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).expect("zip");
    let name = (0..z.len())
        .map(|i| {
            z.by_index(i)
                .expect("entry")
                .name()
                .expect("name")
                .into_owned()
        })
        .find(|n| n.ends_with("/data/0"))
        .expect("data record");
    let f = z.by_name(&name).expect("entry");
    f.data_start().expect("data start")
}

#[test]
fn misaligned_records_are_copied() {
    let t = Tensor::from_vec(values(), &[1000]).expect("tensor");
    let bytes = save_torch_save_bytes(&IValue::Tensor(t), "x").expect("bytes");
    let mut checked = 0;
    for pad in [1usize, 3, 17, 64] {
        let rewritten = rewrite_unaligned(&bytes, pad);
        let aligned = data_offset(&rewritten).is_multiple_of(64);
        let path = temp_path(&format!("unaligned{pad}"));
        std::fs::write(&path, &rewritten).expect("write");
        let loaded = tensor_of(&load_torch_save(&path).expect("load"));
        assert_eq!(loaded.storage().is_external(), aligned, "pad {pad}");
        assert_eq!(loaded.to_vec::<f32>(), values());
        checked += usize::from(!aligned);
        let _ = std::fs::remove_file(&path);
    }
    assert!(checked > 0, "some record was misaligned");
}

#[test]
fn compressed_records_are_copied() {
    let t = Tensor::from_vec(values(), &[1000]).expect("tensor");
    let bytes = save_torch_save_bytes(&IValue::Tensor(t), "x").expect("bytes");
    let mut src = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("zip");
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for i in 0..src.len() {
        let mut f = src.by_index(i).expect("entry");
        let name = f.name().expect("name").into_owned();
        let mut data = Vec::new();
        f.read_to_end(&mut data).expect("read");
        out.start_file(name, opts).expect("start");
        out.write_all(&data).expect("write");
    }
    let path = temp_path("deflated");
    std::fs::write(&path, out.finish().expect("finish").into_inner()).expect("write");
    let loaded = tensor_of(&load_torch_save(&path).expect("load"));
    assert!(!loaded.storage().is_external());
    assert_eq!(loaded.to_vec::<f32>(), values());
    let _ = std::fs::remove_file(&path);
}

#[test]
fn truncated_files_are_refused() {
    let path = saved_tensor("trunc");
    let bytes = std::fs::read(&path).expect("read");
    for keep in [bytes.len() - 1, bytes.len() / 2, 100] {
        std::fs::write(&path, &bytes[..keep]).expect("write");
        assert!(load_torch_save(&path).is_err(), "truncated to {keep} bytes");
    }
    let _ = std::fs::remove_file(&path);
}

#[test]
fn replaces_contents_and_leaves_no_temporary() {
    let dir = std::env::temp_dir().join(format!("ts-serialize-replace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("a.pt");
    replace_file(&path, b"first").expect("write");
    replace_file(&path, b"second").expect("replace");
    assert_eq!(std::fs::read(&path).expect("read"), b"second");
    let names: Vec<_> = std::fs::read_dir(&dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_folder_is_an_error() {
    let path = std::env::temp_dir()
        .join(format!("ts-serialize-missing-{}", std::process::id()))
        .join("x.pt");
    assert!(replace_file(&path, b"x").is_err());
}
