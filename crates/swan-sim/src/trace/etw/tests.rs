use super::super::{assert_err, detect, rec, TraceFormat, TraceReader, TraceRecord};
use super::*;
use std::io::Cursor;

/// A dump in the layout the public descriptions give (see the module's comment), written by
/// hand for these tests: it is not an excerpt of a real trace (there is none on this
/// machine). The header's DiskRead, DiskWrite, *Init and DiskFlush lines are the TPC-E
/// README's; the FileIo lines' fields are made up (the reader reads nothing of them but
/// their event name). Requests: reads and writes on disks 1 and 0, one with IOSize without
/// `0x`, one without the fields after DiskNum, one with an empty FileName.
const SAMPLE: &str = "\
BeginHeader
DiskRead, TimeStamp, Process Name ( PID), ThreadID, IrpPtr, ByteOffset, IOSize, ElapsedTime, DiskNum, IrpFlags, DiskSvcTime, I/O Pri, VolSnap, FileObject, FileName
DiskWrite, TimeStamp, Process Name ( PID), ThreadID, IrpPtr, ByteOffset, IOSize, ElapsedTime, DiskNum, IrpFlags, DiskSvcTime, I/O Pri, VolSnap, FileObject, FileName
DiskReadInit, TimeStamp, Process Name ( PID), ThreadID, IrpPtr
DiskWriteInit, TimeStamp, Process Name ( PID), ThreadID, IrpPtr
DiskFlush, TimeStamp, Process Name ( PID), ThreadID, IrpPtr, ElapsedTime, DiskNum, IrpFlags, DiskSvcTime, I/O Pri
DiskFlushInit, TimeStamp, Process Name ( PID), ThreadID, IrpPtr
FileIoCreate, TimeStamp, Process Name ( PID), ThreadID, FileObject, FileName
FileIoRead, TimeStamp, Process Name ( PID), ThreadID, FileObject, ByteOffset, Size, FileName
EndHeader
FileIoCreate,     100010,     store.exe ( 1234),       5678, 0xfffffa8005d3e2b0, \\Device\\HarddiskVolume3\\mdbdata\\priv1.edb
DiskReadInit,     100200,     store.exe ( 1234),       5678, 0xfffffa8004b2c010
DiskRead,     100250,     store.exe ( 1234),       5678, 0xfffffa8004b2c010, 0x0000000012340000, 0x00002000,        50,    1, 0x00060043,        42, Normal,       0x0, 0xfffffa8005d3e2b0, \\Device\\HarddiskVolume3\\mdbdata\\priv1.edb
FileIoRead,     100300,     store.exe ( 1234),       5678, 0xfffffa8005d3e2b0, 0x12340000, 0x2000, \\Device\\HarddiskVolume3\\mdbdata\\priv1.edb
DiskWriteInit,     100700,        System (    4),         88, 0xfffffa8004b2d7a0
DiskWrite,     100750,        System (    4),         88, 0xfffffa8004b2d7a0, 0x0000000000a01000, 0x00010000,       180,    0, 0x00060903,       171, Normal,       0x0, 0x0000000000000000, 
DiskFlushInit,     101000,        System (    4),         88, 0xfffffa8004b2e010
DiskFlush,     101020,        System (    4),         88, 0xfffffa8004b2e010,        20,    0, 0x00060000,        18, Normal
DiskReadInit,     102000,     store.exe ( 1234),       5680, 0xfffffa8004b2f330
DiskRead,     102150,     store.exe ( 1234),       5680, 0xfffffa8004b2f330, 0x7fff0000, 1000,       150,    1
DiskWriteInit,     103000,     store.exe ( 1234),       5678, 0xfffffa8004b30010
DiskWrite,     103075.5,     store.exe ( 1234),       5678, 0xfffffa8004b30010, 0x0000000012342000, 0x00000200,        75,    1, 0x00060043,        70, High,       0x0, 0xfffffa8005d3e2b0, \\Device\\HarddiskVolume3\\mdbdata\\E00.log
";

fn data_lines() -> String {
    let end = SAMPLE.find("EndHeader\n").unwrap() + "EndHeader\n".len();
    SAMPLE[end..].to_string()
}

/// A reader over an in-memory dump.
type Reader = TraceReader<Cursor<Vec<u8>>>;

fn read(text: &str, skip_bad: bool) -> (Vec<Result<TraceRecord, String>>, Reader) {
    let mut reader = TraceReader::new(TraceFormat::Etw, Cursor::new(text.as_bytes().to_vec()), skip_bad);
    let out = reader.by_ref().map(|r| r.map_err(|e| e.to_string())).collect();
    (out, reader)
}

/// The sample's four requests, re-timed to the first (µs → ns), with their application ids.
fn sample_records() -> Vec<TraceRecord> {
    let with_app = |r: TraceRecord, app| TraceRecord { app, ..r };
    vec![
        with_app(rec(0, TraceOp::Read, 0x1234_0000, 0x2000, 1), 0),
        with_app(rec(500_000, TraceOp::Write, 0xa0_1000, 0x1_0000, 0), 1),
        with_app(rec(1_900_000, TraceOp::Read, 0x7fff_0000, 0x1000, 1), 0),
        with_app(rec(2_825_500, TraceOp::Write, 0x1234_2000, 0x200, 1), 0),
    ]
}

#[test]
fn the_sample_reads_as_its_disk_requests() {
    let (out, reader) = read(SAMPLE, false);
    let records: Vec<TraceRecord> = out.into_iter().map(Result::unwrap).collect();
    assert_eq!(records, sample_records());
    assert_eq!(reader.skipped(), 0);
    assert_eq!(reader.lines_read(), SAMPLE.lines().count() as u64);
    let events: Vec<(&str, u64)> = reader.other_events().iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        events,
        [
            ("DiskFlush", 1),
            ("DiskFlushInit", 1),
            ("DiskReadInit", 2),
            ("DiskWriteInit", 2),
            ("FileIoCreate", 1),
            ("FileIoRead", 1)
        ],
        "the header's lines are not counted as events"
    );
    assert_eq!(reader.applications().names(), ["disk 1", "disk 0"]);
    assert_eq!(reader.applications().warning(), None);
}

#[test]
fn a_dump_without_its_header_reads_the_same() {
    let (out, reader) = read(&data_lines(), false);
    assert_eq!(out.into_iter().map(Result::unwrap).collect::<Vec<_>>(), sample_records());
    assert_eq!(reader.other_events().values().sum::<u64>(), 8);
}

#[test]
fn anything_inside_the_header_block_is_passed_over() {
    // Lines the public description does not show (a title, a field list without TimeStamp)
    // are not events and not errors while inside the block.
    let text = format!("BeginHeader\nTrace of 2008, 3 disks\n1234, not a field list\nEndHeader\n{}", data_lines());
    let (out, reader) = read(&text, false);
    assert_eq!(out.into_iter().map(Result::unwrap).collect::<Vec<_>>(), sample_records());
    assert!(!reader.other_events().contains_key("Trace of 2008"));
}

#[test]
fn a_bad_hex_field_is_an_error_naming_its_line() {
    let text = SAMPLE.replacen("0x0000000000a01000", "0x00000000g0a01000", 1);
    let (out, _) = read(&text, false);
    let line = SAMPLE.lines().position(|l| l.contains("0x0000000000a01000")).unwrap() + 1;
    let errors: Vec<&String> = out.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(
        errors,
        [&format!("line {line}: field 6 (ByteOffset): expected a hexadecimal number (0x…), got '0x00000000g0a01000'")]
    );
    assert_eq!(out.len(), 4, "reading goes on after the error");
    let (out, reader) = read(&text, true);
    assert_eq!(out.len(), 3);
    assert_eq!(reader.skipped(), 1);
}

#[test]
fn request_lines() {
    let line = "DiskWrite, 42, System (   4), 88, 0xfffffa80, 0xA000, 0x1000, 7, 3, 0x0, 5, Normal, 0x0, 0x0, ";
    assert_eq!(parse_line(line).unwrap(), Some(rec(42_000, TraceOp::Write, 0xa000, 0x1000, 3)));
    // Hex without 0x, fields after DiskNum missing, a fraction of a µs.
    let line = "DiskRead, 1.25, store.exe ( 1234), 1, 0x1, 200, 1000, 9, 12\r\n";
    assert_eq!(parse_line(line).unwrap(), Some(rec(1_250, TraceOp::Read, 0x200, 0x1000, 12)));
}

#[test]
fn lines_without_a_request() {
    for line in [
        "BeginHeader",
        "EndHeader",
        "DiskRead, TimeStamp, Process Name ( PID), ThreadID, IrpPtr, ByteOffset, IOSize, ElapsedTime, DiskNum",
        "DiskReadInit, 100, store.exe ( 1234), 5, 0xfffffa80",
        "DiskFlush, 101, System (   4), 88, 0xfffffa80, 20, 0, 0x60000, 18, Normal",
        "FileIoCleanup, 102, store.exe ( 1234), 5, 0xfffffa80, ",
        "",
        "# a comment",
    ] {
        assert_eq!(parse_line(line).unwrap(), None, "{line}");
    }
    assert_eq!(skipped_event("DiskReadInit, 100, store.exe ( 1234), 5, 0x1"), Some("DiskReadInit"));
    assert_eq!(skipped_event(" FileIoCleanup , 102"), Some("FileIoCleanup"));
    assert_eq!(skipped_event("DiskWrite, TimeStamp, Process Name ( PID)"), None, "a header line");
    assert_eq!(skipped_event("BeginHeader"), None);
    assert_eq!(skipped_event(""), None);
}

#[test]
fn malformed_lines() {
    let p = "DiskRead, 100, store.exe ( 1234), 5, 0x1";
    assert_err(parse_line(&format!("{p}, 0x200, 0x1000, 9")), "expected at least 9 (through DiskNum) fields, got 8");
    assert_err(
        parse_line(&format!("{p}, 0x200, 0x10 00, 9, 1")),
        "field 7 (IOSize): expected a hexadecimal number (0x…), got '0x10 00'",
    );
    assert_err(
        parse_line(&format!("{p}, 0x, 0x1000, 9, 1")),
        "field 6 (ByteOffset): expected a hexadecimal number (0x…), got '0x'",
    );
    assert_err(
        parse_line(&format!("{p}, 0x10000000000000000, 0x1000, 9, 1")),
        "field 6 (ByteOffset): expected a hexadecimal number below 2^64, got '0x10000000000000000'",
    );
    assert_err(
        parse_line(&format!("{p}, 0x200, 0x1000, 9, 0x1")),
        "field 9 (DiskNum): expected an unsigned integer, got '0x1'",
    );
    assert_err(
        parse_line("DiskRead, -3, store.exe ( 1234), 5, 0x1, 0x200, 0x1000, 9, 1"),
        "field 2 (TimeStamp): expected a non-negative decimal number, got '-3'",
    );
    // Another format read as this one fails on its first line.
    assert_err(
        parse_line("128000000000000000,web,2,Read,1048576,8192,1500"),
        "field 1 (event): expected an event name such as DiskRead or DiskWrite, got '128000000000000000'",
    );
}

#[test]
fn dumps_are_recognised_from_their_first_lines() {
    let head: Vec<&str> = SAMPLE.lines().take(20).collect();
    assert_eq!(detect(&head), Some(TraceFormat::Etw));
    let data = data_lines();
    let head: Vec<&str> = data.lines().take(3).collect();
    assert_eq!(detect(&head), Some(TraceFormat::Etw), "no header, no request yet: DiskReadInit names it");
    // A header longer than the lines looked at holds no request.
    assert_eq!(detect(&["BeginHeader", "DiskRead, TimeStamp, Process Name ( PID)"]), Some(TraceFormat::Etw));
    assert!(!looks_like(&["128000000000000000,web,2,Read,1048576,8192,1500", "version,time,op,size,lbn"]));
    assert!(!looks_like(&["Disk usage, 3 GiB"]), "an event name has no blank");
}
