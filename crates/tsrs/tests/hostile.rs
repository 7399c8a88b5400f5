//! Hostile inputs, each built on the fly: zip bombs (honest and lying sizes, trailing bytes
//! after a pickle), chains of 100,000 terms, deep nesting and malformed builtin calls. Every
//! one must end in a clear error (or a correct result) with exit status 1: no panic, no
//! signal, and, where GNU `time` is present to measure it, a peak RSS under the bound.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::Scratch;

use flate2::{Compress, Compression, FlushCompress};

/// The acceptance bound on peak memory for any hostile input (the aim is 200 MB).
const RSS_BOUND_KB: u64 = 1 << 20;
/// What a bomb inflates to (below 4 GiB, so no zip64 fields are needed).
const BOMB_MIB: usize = 3 * 1024;

fn tsrs() -> &'static str {
    env!("CARGO_BIN_EXE_tsrs")
}

fn scratch(dir: &Scratch, name: &str) -> PathBuf {
    dir.join(name)
}

/// How a hostile run ended.
struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// Peak resident set in KB, when `/usr/bin/time` could measure it.
    rss_kb: Option<u64>,
}

fn run_tsrs(args: &[&str]) -> Outcome {
    let time = Path::new("/usr/bin/time");
    let measure = cfg!(target_os = "linux") && time.exists();
    let out = if measure {
        Command::new(time)
            .args(["-f", "RSS_KB %M", tsrs()])
            .args(args)
            .output()
            .unwrap()
    } else {
        Command::new(tsrs()).args(args).output().unwrap()
    };
    let mut stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut rss_kb = None;
    if measure {
        if let Some(pos) = stderr.rfind("RSS_KB ") {
            rss_kb = stderr[pos + 7..].trim().parse().ok();
            stderr.truncate(pos);
        }
    }
    Outcome {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
        rss_kb,
    }
}

/// Checks that a run refused its input cleanly: exit status 1, no panic, an error message
/// containing `needle`, and a bounded peak RSS.
fn assert_refused(what: &str, o: &Outcome, needle: &str) {
    assert_eq!(
        o.code,
        Some(1),
        "{what}: expected exit status 1, got {:?}; stderr: {}",
        o.code,
        o.stderr
    );
    assert!(!o.stderr.contains("panicked"), "{what}: {}", o.stderr);
    assert!(
        o.stderr.contains(needle),
        "{what}: expected an error mentioning '{needle}', got: {}",
        o.stderr
    );
    assert_rss(what, o);
}

fn assert_rss(what: &str, o: &Outcome) {
    if let Some(kb) = o.rss_kb {
        eprintln!("{what}: peak RSS {} MB", kb / 1024);
        assert!(kb < RSS_BOUND_KB, "{what}: peak RSS {kb} KB");
    }
}

/// One zip entry: its name, the bytes stored, the compression method, and the CRC and
/// uncompressed size its headers declare (a bomb may lie).
struct Entry {
    name: String,
    data: Vec<u8>,
    method: u16,
    crc: u32,
    size: u32,
}

fn stored(name: &str, data: Vec<u8>) -> Entry {
    Entry {
        name: name.to_owned(),
        crc: crc32fast::hash(&data),
        size: data.len() as u32,
        method: 0,
        data,
    }
}

/// A raw deflate stream of `prefix` followed by `zero_mib` MiB of zeros, and its inflated
/// length. Each MiB after the first compresses to the same bytes (a sync flush aligns the
/// blocks and the window holds only zeros), so the stream is built without compressing
/// gigabytes.
fn deflate_bomb(prefix: &[u8], zero_mib: usize) -> (Vec<u8>, u64) {
    let mut c = Compress::new(Compression::best(), false);
    let mut feed = |input: &[u8], flush: FlushCompress| -> Vec<u8> {
        let mut out = Vec::with_capacity(input.len() + 1024);
        let before = c.total_in();
        loop {
            let done = (c.total_in() - before) as usize;
            out.reserve(4096);
            c.compress_vec(&input[done..], &mut out, flush).unwrap();
            if (c.total_in() - before) as usize == input.len() && out.len() < out.capacity() {
                break;
            }
        }
        out
    };
    let mib = vec![0u8; 1 << 20];
    let mut stream = feed(prefix, FlushCompress::Sync);
    stream.extend(feed(&mib, FlushCompress::Sync));
    let repeat = feed(&mib, FlushCompress::Sync);
    for _ in 1..zero_mib {
        stream.extend_from_slice(&repeat);
    }
    stream.extend(feed(&[], FlushCompress::Finish));
    (stream, prefix.len() as u64 + ((zero_mib as u64) << 20))
}

fn bomb(name: &str, prefix: &[u8], zero_mib: usize, declared: Option<u32>) -> Entry {
    let (data, len) = deflate_bomb(prefix, zero_mib);
    Entry {
        name: name.to_owned(),
        data,
        method: 8,
        crc: 0,
        size: declared.unwrap_or(len.min(u32::MAX as u64) as u32),
    }
}

/// Writes a zip of `entries` (no zip64, no data descriptors).
fn write_zip(path: &Path, entries: &[Entry]) {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for e in entries {
        let offset = out.len() as u32;
        let header = |sig: u32, central: bool| {
            let mut h = Vec::new();
            h.extend(sig.to_le_bytes());
            if central {
                h.extend(20u16.to_le_bytes());
            }
            h.extend(20u16.to_le_bytes());
            h.extend(0u16.to_le_bytes());
            h.extend(e.method.to_le_bytes());
            h.extend(0u16.to_le_bytes());
            h.extend(0x21u16.to_le_bytes());
            h.extend(e.crc.to_le_bytes());
            h.extend((e.data.len() as u32).to_le_bytes());
            h.extend(e.size.to_le_bytes());
            h.extend((e.name.len() as u16).to_le_bytes());
            h.extend(0u16.to_le_bytes());
            if central {
                h.extend([0u8; 6]);
                h.extend(0u32.to_le_bytes());
                h.extend(offset.to_le_bytes());
            }
            h.extend(e.name.as_bytes());
            h
        };
        out.extend(header(0x0403_4b50, false));
        out.extend(&e.data);
        central.extend(header(0x0201_4b50, true));
    }
    let cd_offset = out.len() as u32;
    out.extend(&central);
    out.extend(0x0605_4b50u32.to_le_bytes());
    out.extend([0u8; 4]);
    out.extend((entries.len() as u16).to_le_bytes());
    out.extend((entries.len() as u16).to_le_bytes());
    out.extend((central.len() as u32).to_le_bytes());
    out.extend(cd_offset.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    std::fs::File::create(path)
        .unwrap()
        .write_all(&out)
        .unwrap();
}

/// The records of a legitimate archive written by tsrs, with the archive folder.
fn records_of(path: &Path) -> Vec<(String, Vec<u8>)> {
    let mut a = ts_serialize::Archive::open(path).unwrap();
    let folder = a.name().to_owned();
    let names = a.records().to_vec();
    names
        .into_iter()
        .map(|n| {
            let data = a.read_record(&n).unwrap();
            (format!("{folder}/{n}"), data)
        })
        .collect()
}

/// The same records with `target` (a name ending) replaced by `replace(name, data)`.
fn rebuilt(
    records: &[(String, Vec<u8>)],
    target: &str,
    replace: impl Fn(&str, &[u8]) -> Entry,
) -> Vec<Entry> {
    let mut hit = false;
    let out = records
        .iter()
        .map(|(n, d)| {
            if n.ends_with(target) {
                hit = true;
                replace(n, d)
            } else {
                stored(n, d.clone())
            }
        })
        .collect();
    assert!(hit, "no record {target}");
    out
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

#[test]
fn zip_bombs_are_refused_without_inflating() {
    let dir = Scratch::new("hostile");
    // A legitimate inputs file (one float tensor of 4 elements) and model, from tsrs itself.
    let gen = scratch(&dir, "gen.py");
    write(
        &gen,
        "def f():\n    return (torch.ones(4),)\n\ndef g(x: Tensor):\n    return x + 1\n",
    );
    let inputs = scratch(&dir, "inputs.pt");
    let o = run_tsrs(&[
        "run",
        gen.to_str().unwrap(),
        "--entry",
        "f",
        "--output",
        inputs.to_str().unwrap(),
    ]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let model = scratch(&dir, "model.pt");
    let o = run_tsrs(&[
        "save",
        gen.to_str().unwrap(),
        model.to_str().unwrap(),
        "--entry",
        "g",
    ]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let gen_s = gen.to_str().unwrap();
    let run_with = |inp: &Path| {
        run_tsrs(&[
            "run",
            gen_s,
            "--entry",
            "g",
            "--inputs",
            inp.to_str().unwrap(),
        ])
    };
    let o = run_with(&inputs);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stdout.contains('2'), "{}", o.stdout);

    let input_records = records_of(&inputs);
    let model_records = records_of(&model);
    let bomb_path = scratch(&dir, "bomb.pt");
    let cases: Vec<(&str, Vec<Entry>, &str, &str)> = vec![
        (
            "storage record inflating to 3 GiB (honest header)",
            rebuilt(&input_records, "/data/0", |n, _| {
                bomb(n, &[], BOMB_MIB, None)
            }),
            "inputs",
            "pickle describes",
        ),
        (
            "storage record declaring 16 bytes but inflating to 3 GiB",
            rebuilt(&input_records, "/data/0", |n, _| {
                bomb(n, &[], BOMB_MIB, Some(16))
            }),
            "inputs",
            "declared",
        ),
        (
            "data.pkl followed by 3 GiB of zeros (honest header)",
            rebuilt(&input_records, "/data.pkl", |n, d| {
                bomb(n, d, BOMB_MIB, None)
            }),
            "inputs",
            "budget",
        ),
        (
            "data.pkl followed by 3 GiB of zeros (header declaring the pickle)",
            rebuilt(&input_records, "/data.pkl", |n, d| {
                bomb(n, d, BOMB_MIB, Some(d.len() as u32))
            }),
            "inputs",
            "declared",
        ),
        (
            "model data.pkl followed by 3 GiB of zeros",
            rebuilt(&model_records, "/data.pkl", |n, d| {
                bomb(n, d, BOMB_MIB, None)
            }),
            "model",
            "budget",
        ),
        (
            "model code inflating to 3 GiB",
            rebuilt(&model_records, ".py", |n, d| bomb(n, d, BOMB_MIB, None)),
            "model",
            "budget",
        ),
    ];
    for (what, entries, kind, needle) in cases {
        write_zip(&bomb_path, &entries);
        let archive_len = std::fs::metadata(&bomb_path).unwrap().len();
        assert!(
            archive_len < 8 << 20,
            "{what}: the bomb is {archive_len} bytes"
        );
        let o = if kind == "inputs" {
            run_with(&bomb_path)
        } else {
            run_tsrs(&["info", bomb_path.to_str().unwrap()])
        };
        assert_refused(what, &o, needle);
    }
}

/// A program whose entry `f` returns `expr` (built from `terms` copies of `term`).
fn chain_program(head: &str, term: &str, terms: usize) -> String {
    let mut s = String::from("def f():\n    return ");
    s.push_str(head);
    for _ in 0..terms {
        s.push_str(term);
    }
    s.push('\n');
    s
}

#[test]
fn long_chains_and_deep_nesting_end_cleanly() {
    let dir = Scratch::new("hostile");
    const N: usize = 100_000;
    let mut elifs = String::from("def f(x: int) -> int:\n    if x == 0:\n        return 0\n");
    for i in 1..N {
        elifs.push_str(&format!("    elif x == {i}:\n        return {i}\n"));
    }
    elifs.push_str("    return -1\n");
    let mut ternary = String::from("def f(x: int) -> int:\n    return ");
    for i in 0..N {
        ternary.push_str(&format!("{i} if x == {i} else "));
    }
    ternary.push_str("-1\n");
    let mut parens = String::from("def f():\n    return ");
    parens.push_str(&"(".repeat(N));
    parens.push('1');
    parens.push_str(&")".repeat(N));
    parens.push('\n');
    let mut lists = String::from("def f():\n    return ");
    lists.push_str(&"[".repeat(N));
    lists.push_str(&"]".repeat(N));
    lists.push('\n');
    // (what, program, expected output when it runs, or a piece of the expected error)
    let cases: Vec<(&str, String, Result<&str, &str>)> = vec![
        ("+ chain", chain_program("1", " + 1", N), Ok("100001")),
        (
            ".add(1) chain",
            chain_program("torch.zeros(1)", ".add(1)", N),
            Ok("100000"),
        ),
        // Each `and`/`or`/comparison link is an `if` node with two blocks (~9 KB of graph
        // apiece through the passes), so these chains are shorter to stay well inside the
        // memory bound; they are walked iteratively all the same.
        (
            "and chain",
            chain_program("True", " and True", N / 4),
            Ok("True"),
        ),
        (
            "or chain",
            chain_program("False", " or False", N / 4),
            Ok("False"),
        ),
        (
            "comparison chain",
            chain_program("0", " < 1", N / 4),
            Ok("False"),
        ),
        (
            "[0] chain",
            chain_program("[[1]]", "[0]", N),
            Err("not subscriptable"),
        ),
        (
            "string concatenation",
            chain_program("'a'", " + 'b'", N),
            Ok("ab"),
        ),
        ("elif chain", elifs, Err("nested too deeply")),
        ("nested ternaries", ternary, Err("nested too deeply")),
        ("nested parentheses", parens, Err("nested too deeply")),
        ("nested lists", lists, Err("nested too deeply")),
    ];
    let prog = scratch(&dir, "chain.py");
    for (what, text, expect) in cases {
        write(&prog, &text);
        // The `def f(x: int)` programs are refused while parsing, before any input is needed.
        let o = run_tsrs(&["run", prog.to_str().unwrap(), "--entry", "f"]);
        match expect {
            Ok(out) => {
                assert_eq!(o.code, Some(0), "{what}: {}", o.stderr);
                assert!(o.stdout.contains(out), "{what}: {}", o.stdout);
                assert_rss(what, &o);
            }
            Err(needle) => assert_refused(what, &o, needle),
        }
    }
}

#[test]
fn malformed_builtin_calls_are_errors() {
    let dir = Scratch::new("hostile");
    let prog = scratch(&dir, "builtins.py");
    for (call, needle) in [
        ("hasattr(x)", "hasattr expects 2 arguments"),
        ("hasattr(x, 'a', 'b')", "hasattr expects 2 arguments"),
        ("unchecked_cast(Tensor, )", "unchecked_cast expects"),
        ("unchecked_cast()", "unchecked_cast expects"),
        ("uninitialized()", "uninitialized expects"),
        ("isinstance(x)", "isinstance expects"),
        ("getattr(x)", "getattr expects"),
        ("annotate(int)", "annotate expects"),
        ("torch.jit.annotate()", "annotate"),
    ] {
        write(
            &prog,
            &format!("def f(x: Tensor):\n    y = {call}\n    return x\n"),
        );
        let o = run_tsrs(&["graph", prog.to_str().unwrap(), "--entry", "f"]);
        assert_refused(call, &o, needle);
    }
}
