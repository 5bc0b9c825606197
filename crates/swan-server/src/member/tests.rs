//! Member checks and the file and memory backings under them.

use super::file::{is_aligned, BOUNCE_CHUNK};
use super::*;
use std::fs::{self, File};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::process::Command;

const MIB: u64 = 1 << 20;

fn pattern(seed: u8, len: usize) -> Vec<u8> {
    (0..len).map(|i| seed.wrapping_add((i / 7) as u8).wrapping_mul(31) | 1).collect()
}

fn new_file(dir: &Path, name: &str, bytes: u64) -> PathBuf {
    let p = dir.join(name);
    Member::create_file(&p, bytes, false).unwrap();
    p
}

fn rw() -> OpenOptions {
    OpenOptions::default()
}

fn direct() -> OpenOptions {
    OpenOptions { direct: true, read_only: false }
}

/// A buffer of `len` bytes that is deliberately not 4096-aligned: the bounce path.
fn unaligned(len: usize) -> (Vec<u8>, usize) {
    let v = vec![0u8; len + BLOCK + 1];
    let skip = ((v.as_ptr() as usize).wrapping_neg() % BLOCK) + 1;
    (v, skip)
}

/// Write, read back, and check untouched blocks still read as zeroes.
fn round_trip(m: &Member) {
    let data = pattern(7, 3 * BLOCK);
    m.write(5, &data).unwrap();
    let mut back = vec![0u8; 3 * BLOCK];
    m.read(5, &mut back).unwrap();
    assert!(back == data);
    let mut zero = vec![1u8; BLOCK];
    m.read(4, &mut zero).unwrap();
    assert!(zero.iter().all(|&b| b == 0));
    m.read(m.blocks() - 1, &mut zero).unwrap();
    assert!(zero.iter().all(|&b| b == 0));
    m.sync().unwrap();
}

/// Trim the middle of a written range: it reads as zeroes, its neighbours survive.
fn trim_reads_zero(m: &Member) {
    let data = pattern(3, 16 * BLOCK);
    m.write(0, &data).unwrap();
    m.sync().unwrap();
    m.trim(4, 8).unwrap();
    let mut back = vec![0u8; 16 * BLOCK];
    m.read(0, &mut back).unwrap();
    assert!(back[..4 * BLOCK] == data[..4 * BLOCK]);
    assert!(back[4 * BLOCK..12 * BLOCK].iter().all(|&b| b == 0), "trimmed blocks must read as zeroes");
    assert!(back[12 * BLOCK..] == data[12 * BLOCK..]);
    m.trim(0, 0).unwrap();
    m.sync().unwrap();
}

/// Four threads write disjoint blocks of one shared member at once.
fn concurrent_disjoint(m: &Member) {
    const PER: u64 = 32;
    std::thread::scope(|s| {
        for t in 0..4u64 {
            s.spawn(move || {
                for i in 0..PER {
                    // Interleaved so that neighbouring blocks belong to different threads.
                    let block = i * 4 + t;
                    m.write(block, &pattern((t * 100 + i) as u8, BLOCK)).unwrap();
                }
            });
        }
    });
    let mut back = vec![0u8; BLOCK];
    for t in 0..4u64 {
        for i in 0..PER {
            m.read(i * 4 + t, &mut back).unwrap();
            assert!(back == pattern((t * 100 + i) as u8, BLOCK), "thread {t} block {}", i * 4 + t);
        }
    }
}

#[test]
fn create_open_and_size() {
    let dir = tempfile::tempdir().unwrap();
    let p = new_file(dir.path(), "m0", 4 * MIB);
    assert_eq!(fs::metadata(&p).unwrap().len(), 4 * MIB);
    let m = Member::open(&p, rw()).unwrap();
    assert_eq!(m.path(), p);
    assert_eq!(m.kind(), MemberKind::File);
    assert_eq!(m.blocks(), 1024);
    assert!(!m.is_direct());
    assert!(!m.is_read_only());

    // A size that is not a whole number of blocks rounds down.
    let odd = dir.path().join("odd");
    File::create(&odd).unwrap().set_len(10 * BLOCK_U64 + 100).unwrap();
    assert_eq!(Member::open(&odd, rw()).unwrap().blocks(), 10);

    let e = Member::open(&dir.path().join("missing"), rw()).unwrap_err();
    assert!(matches!(e, MemberError::Io { op: Op::Open, .. }), "{e}");
    assert!(!e.is_io_error());
    let e = Member::open(dir.path(), rw()).unwrap_err();
    assert!(matches!(e, MemberError::NotFileOrDevice { .. }), "{e}");
}

#[test]
fn create_refuses_existing_unless_overwrite_and_bad_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let p = new_file(dir.path(), "m0", MIB);
    {
        let m = Member::open(&p, rw()).unwrap();
        m.write(0, &pattern(1, BLOCK)).unwrap();
    }
    let e = Member::create_file(&p, 2 * MIB, false).unwrap_err();
    assert!(matches!(e, MemberError::AlreadyExists { .. }), "{e}");
    assert!(e.to_string().contains(&*p.to_string_lossy()), "{e}");
    assert_eq!(fs::metadata(&p).unwrap().len(), MIB, "refused create must leave the file alone");

    Member::create_file(&p, 2 * MIB, true).unwrap();
    let m = Member::open(&p, rw()).unwrap();
    assert_eq!(m.blocks(), 512);
    let mut b = vec![1u8; BLOCK];
    m.read(0, &mut b).unwrap();
    assert!(b.iter().all(|&x| x == 0), "overwrite starts from zeroes");

    // Overwrite never replaces something that is not a regular file.
    let e = Member::create_file(dir.path(), MIB, true).unwrap_err();
    assert!(matches!(e, MemberError::NotFileOrDevice { op: Op::Create, .. }), "{e}");

    for bytes in [0, 100, BLOCK_U64 + 1] {
        let e = Member::create_file(&dir.path().join("bad"), bytes, false).unwrap_err();
        assert!(matches!(e, MemberError::BadSize { .. }), "{bytes}: {e}");
    }
    assert!(!dir.path().join("bad").exists());
}

#[test]
fn write_read_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let p = new_file(dir.path(), "m0", MIB);
    let m = Member::open(&p, rw()).unwrap();
    round_trip(&m);
    // Survives reopening.
    drop(m);
    let m = Member::open(&p, OpenOptions { direct: false, read_only: true }).unwrap();
    let mut back = vec![0u8; 3 * BLOCK];
    m.read(5, &mut back).unwrap();
    assert!(back == pattern(7, 3 * BLOCK));
}

#[test]
fn out_of_range_and_misuse_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let p = new_file(dir.path(), "m0", MIB);
    let m = Member::open(&p, rw()).unwrap();
    let mut b = vec![0u8; 2 * BLOCK];
    let errors = [
        m.read(256, &mut b[..BLOCK]).unwrap_err(),
        m.read(255, &mut b).unwrap_err(),
        m.write(255, &b).unwrap_err(),
        m.write(u64::MAX, &b).unwrap_err(),
        m.trim(200, 57).unwrap_err(),
        m.trim(u64::MAX, 2).unwrap_err(),
    ];
    for e in &errors {
        assert!(matches!(e, MemberError::OutOfRange { blocks: 256, .. }), "{e}");
        assert!(!e.is_io_error());
        assert_eq!(e.path(), p);
        assert!(e.to_string().contains(&*p.to_string_lossy()), "{e}");
    }
    assert_eq!(errors[1].op(), Op::Read { block: 255, count: 2 });
    assert!(errors[1].to_string().contains("read of blocks 255..257"), "{}", errors[1]);
    // The last block and an empty transfer at the very end are in range.
    m.write(255, &b[..BLOCK]).unwrap();
    m.read(256, &mut []).unwrap();
    m.trim(256, 0).unwrap();

    let e = m.read(0, &mut b[..100]).unwrap_err();
    assert!(matches!(e, MemberError::BadLength { len: 100, .. }), "{e}");
    assert!(!e.is_io_error());
    let e = m.write(0, &b[..BLOCK + 1]).unwrap_err();
    assert!(matches!(e, MemberError::BadLength { .. }), "{e}");

    let ro = Member::open(&p, OpenOptions { direct: false, read_only: true }).unwrap();
    assert!(ro.is_read_only());
    for e in [ro.write(0, &b).unwrap_err(), ro.trim(0, 1).unwrap_err()] {
        assert!(matches!(e, MemberError::ReadOnly { .. }), "{e}");
        assert!(!e.is_io_error());
    }
    ro.read(0, &mut b).unwrap();
}

#[test]
fn bytes_inside_one_block_are_read_and_crossing_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = new_file(dir.path(), "m0", MIB);
    let m = Member::open(&p, rw()).unwrap();
    let data = pattern(3, 2 * BLOCK);
    m.write(7, &data).unwrap();
    for (offset, len) in [(0, 8), (100, 12), (BLOCK - 12, 12), (0, BLOCK)] {
        let mut got = vec![0u8; len];
        m.read_bytes_cached(8, offset, &mut got).unwrap();
        assert_eq!(got, data[BLOCK + offset..BLOCK + offset + len], "bytes {offset}+{len} of block 8");
    }
    let mut got = [0u8; 12];
    let e = m.read_bytes_cached(7, BLOCK - 6, &mut got).unwrap_err();
    assert!(matches!(e, MemberError::CrossesBlock { offset: 4090, end: 4102, .. }), "{e}");
    assert!(!e.is_io_error());
    assert!(e.to_string().contains("4090..4102"), "{e}");
    let e = m.read_bytes_cached(256, 0, &mut got).unwrap_err();
    assert!(matches!(e, MemberError::OutOfRange { blocks: 256, .. }), "{e}");
}

#[test]
fn short_read_after_truncation_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = new_file(dir.path(), "m0", MIB);
    let m = Member::open(&p, rw()).unwrap();
    // Someone else shrinks the file behind our back.
    fs::OpenOptions::new().write(true).open(&p).unwrap().set_len(10 * BLOCK_U64 + 10).unwrap();
    let mut b = vec![0u8; 2 * BLOCK];
    m.read(0, &mut b).unwrap();
    for block in [10, 20] {
        let e = m.read(block, &mut b).unwrap_err();
        assert!(matches!(e, MemberError::Truncated { .. }), "{e}");
        assert!(e.is_io_error(), "a shrunken member has failed");
        assert!(e.io_source().is_some());
    }
}

#[test]
fn trim_reads_zero_and_frees_file_space() {
    let dir = tempfile::tempdir().unwrap();
    let p = new_file(dir.path(), "m0", 4 * MIB);
    let m = Member::open(&p, rw()).unwrap();
    m.write(0, &pattern(9, 512 * BLOCK)).unwrap();
    m.sync().unwrap();
    let before = fs::metadata(&p).unwrap().blocks();
    assert!(before * 512 >= 512 * BLOCK_U64, "written blocks take space ({before} sectors)");

    m.trim(64, 256).unwrap();
    m.sync().unwrap();
    let after = fs::metadata(&p).unwrap().blocks();
    assert!(before - after >= 256 * BLOCK_U64 / 512, "punching 1 MiB must free it: {before} -> {after} sectors");
    assert_eq!(fs::metadata(&p).unwrap().len(), 4 * MIB, "trim keeps the size");
    let mut back = vec![1u8; 512 * BLOCK];
    m.read(0, &mut back).unwrap();
    let data = pattern(9, 512 * BLOCK);
    assert!(back[..64 * BLOCK] == data[..64 * BLOCK]);
    assert!(back[64 * BLOCK..320 * BLOCK].iter().all(|&b| b == 0));
    assert!(back[320 * BLOCK..] == data[320 * BLOCK..]);

    trim_reads_zero(&m);
}

#[test]
fn direct_io_round_trip_aligned_and_not() {
    // /var/tmp is on a disk filesystem here (ext4); tmpfs may refuse O_DIRECT.
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let p = new_file(dir.path(), "m0", 4 * MIB);
    let m = match Member::open(&p, direct()) {
        Err(e @ MemberError::DirectUnsupported { .. }) => {
            eprintln!("skipping: {e}");
            return;
        }
        r => r.unwrap(),
    };
    assert!(m.is_direct());
    round_trip(&m);
    // A few bytes inside a block, through the buffered descriptor beside O_DIRECT.
    let mut got = [0u8; 12];
    m.read_bytes_cached(6, 30, &mut got).unwrap();
    assert_eq!(got, pattern(7, 3 * BLOCK)[BLOCK + 30..BLOCK + 42]);

    // Unaligned buffers, larger than one bounce chunk, both ways.
    let len = BOUNCE_CHUNK + 2 * BLOCK;
    let data = pattern(11, len);
    let (mut src, skip) = unaligned(len);
    assert!(!is_aligned(&src[skip..skip + len]));
    src[skip..skip + len].copy_from_slice(&data);
    m.write(100, &src[skip..skip + len]).unwrap();
    let (mut dst, skip) = unaligned(len);
    m.read(100, &mut dst[skip..skip + len]).unwrap();
    assert!(dst[skip..skip + len] == data[..]);

    // And read back through the page cache, to be sure the bytes are on the file.
    let buffered = Member::open(&p, OpenOptions { direct: false, read_only: true }).unwrap();
    let mut back = vec![0u8; len];
    buffered.read(100, &mut back).unwrap();
    assert!(back == data);

    trim_reads_zero(&m);
}

#[test]
fn concurrent_writes_to_disjoint_blocks() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let p = new_file(dir.path(), "m0", MIB);
    concurrent_disjoint(&Member::open(&p, rw()).unwrap());
    match Member::open(&p, direct()) {
        Err(e @ MemberError::DirectUnsupported { .. }) => eprintln!("skipping O_DIRECT part: {e}"),
        r => concurrent_disjoint(&r.unwrap()),
    }
}

/// A loop device over a file, detached when dropped (also when a test fails).
struct LoopDevice {
    dev: PathBuf,
}

impl LoopDevice {
    fn attach(file: &Path) -> LoopDevice {
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(file)
            .output()
            .expect("losetup must be available to test block devices (util-linux)");
        assert!(out.status.success(), "losetup -f --show failed: {}", String::from_utf8_lossy(&out.stderr));
        let dev = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        assert!(dev.starts_with("/dev/"), "losetup printed {dev:?}");
        LoopDevice { dev: dev.into() }
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        match Command::new("losetup").arg("-d").arg(&self.dev).status() {
            Ok(s) if s.success() => {}
            r => eprintln!("could not detach {}: {r:?}", self.dev.display()),
        }
    }
}

#[test]
fn block_device_via_loop() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    // Not a whole number of blocks: the device's usable size rounds down too.
    let backing = dir.path().join("backing");
    File::create(&backing).unwrap().set_len(8 * MIB + 512).unwrap();
    let lo = LoopDevice::attach(&backing);

    let m = Member::open(&lo.dev, rw()).unwrap();
    assert_eq!(m.kind(), MemberKind::BlockDevice);
    assert_eq!(m.blocks(), 2048);
    assert_eq!(m.path(), lo.dev);
    round_trip(&m);
    trim_reads_zero(&m);
    concurrent_disjoint(&m);
    let e = m.read(2048, &mut [0u8; BLOCK]).unwrap_err();
    assert!(matches!(e, MemberError::OutOfRange { .. }), "{e}");
    assert!(e.to_string().contains(&*lo.dev.to_string_lossy()), "{e}");

    // Claimed exclusively while open read-write; read-only opens still work.
    let e = Member::open(&lo.dev, rw()).unwrap_err();
    assert!(matches!(e, MemberError::DeviceBusy { .. }), "{e}");
    m.write(2000, &pattern(21, BLOCK)).unwrap();
    let ro = Member::open(&lo.dev, OpenOptions { direct: false, read_only: true }).unwrap();
    let mut back = vec![0u8; BLOCK];
    ro.read(2000, &mut back).unwrap();
    assert!(back == pattern(21, BLOCK));
    drop((m, ro));

    // O_DIRECT on the device, with an unaligned buffer.
    let m = Member::open(&lo.dev, direct()).unwrap();
    assert!(m.is_direct());
    let data = pattern(13, 8 * BLOCK);
    let (mut src, skip) = unaligned(8 * BLOCK);
    src[skip..skip + 8 * BLOCK].copy_from_slice(&data);
    m.write(1000, &src[skip..skip + 8 * BLOCK]).unwrap();
    m.sync().unwrap();
    let (mut dst, skip) = unaligned(8 * BLOCK);
    m.read(1000, &mut dst[skip..skip + 8 * BLOCK]).unwrap();
    assert!(dst[skip..skip + 8 * BLOCK] == data[..]);
    m.trim(1002, 4).unwrap();
    m.read(1000, &mut dst[skip..skip + 8 * BLOCK]).unwrap();
    assert!(dst[skip + 2 * BLOCK..skip + 6 * BLOCK].iter().all(|&b| b == 0));
    assert!(dst[skip + 6 * BLOCK..skip + 8 * BLOCK] == data[6 * BLOCK..]);
    m.sync().unwrap();
    drop(m);

    // The bytes really went through to the backing file.
    let mut raw = vec![0u8; 2 * BLOCK];
    File::open(&backing).unwrap().read_exact_at(&mut raw, 1006 * BLOCK_U64).unwrap();
    assert!(raw == data[6 * BLOCK..]);
}

#[test]
fn a_memory_member_keeps_the_member_contract() {
    let image = MemoryBacking::new(1024);
    let m = Member::in_memory(Path::new("mem0"), image.clone(), false);
    assert_eq!((m.blocks(), m.kind()), (1024, MemberKind::Memory));
    round_trip(&m);
    trim_reads_zero(&m);
    // Small reads inside one block, and the range checks of any member.
    let mut few = [0u8; 12];
    m.read_bytes_cached(1, 100, &mut few).unwrap();
    assert!(few == pattern(3, 16 * BLOCK)[BLOCK + 100..BLOCK + 112]);
    let mut buf = vec![0u8; BLOCK];
    assert!(matches!(m.read(1024, &mut buf), Err(MemberError::OutOfRange { .. })));
    // A fork is a copy: later writes to the original do not reach it.
    let copy = image.fork();
    m.write(1, &pattern(9, BLOCK)).unwrap();
    let c = Member::in_memory(Path::new("mem1"), copy, true);
    c.read(1, &mut buf).unwrap();
    assert!(buf == pattern(3, 16 * BLOCK)[BLOCK..2 * BLOCK]);
    assert!(matches!(c.write(1, &buf), Err(MemberError::ReadOnly { .. })));
    concurrent_disjoint(&m);
    // Only written, non-zero blocks are listed.
    let listed: Vec<u64> = image.nonzero_blocks().iter().map(|(b, _)| *b).collect();
    assert!(listed.contains(&1) && !listed.contains(&1000), "{listed:?}");
}

#[test]
fn an_absent_member_fails_every_operation_and_says_why() {
    let m = Member::absent(3, 100);
    assert!(m.is_absent());
    assert_eq!(m.blocks(), 100);
    m.lock(true).unwrap();
    let mut buf = vec![0u8; BLOCK];
    let errs = [
        m.read(0, &mut buf).unwrap_err(),
        m.write(0, &buf).unwrap_err(),
        m.trim(0, 1).unwrap_err(),
        m.sync().unwrap_err(),
    ];
    for e in errs {
        assert!(matches!(e, MemberError::Lost { .. }), "{e:?}");
        let text = e.to_string();
        assert!(text.contains("missing(member 3)") && text.contains("absent"), "{text}");
    }
    // Range checks come first, as for any member.
    assert!(matches!(m.read(100, &mut buf), Err(MemberError::OutOfRange { .. })));
}
