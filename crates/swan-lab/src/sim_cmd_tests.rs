//! `swan sim`'s SSD placement flags (`--ssd-layout`, `--ssd-gc-frontier`, `--ssd-pages-per-block`):
//! what they set on the model, what they refuse, and that a preset's options print as before.

use super::*;
use clap::Parser;
use swan_models::ssd::SsdConfig;
use swan_sim::engine::SimConfig;

#[derive(Parser)]
#[command(no_binary_name = true)]
struct Line {
    #[command(flatten)]
    args: SimArgs,
}

fn config(words: &str) -> anyhow::Result<SimConfig> {
    Line::try_parse_from(words.split_whitespace())?.args.to_config()
}

#[test]
fn the_layout_flags_override_the_preset_and_its_default_segment() {
    let plain = config("--scheme swan0").unwrap();
    assert_eq!((plain.ssd.layout, plain.ssd.gc_frontier), (WriteLayout::PageStriped, false));
    assert_eq!(plain.array.segment_rows, 2048, "8 MiB: a block on each of 16 units");
    let chunked = config("--scheme swan0 --ssd-layout chunk --ssd-gc-frontier on").unwrap();
    assert_eq!(chunked.ssd.layout, WriteLayout::Chunked { pages: 128 }, "one erase block");
    assert!(chunked.ssd.gc_frontier);
    assert_eq!(chunked.array.segment_rows, 128, "one block is what a TRIM frees whole");
    let odd = config("--scheme swan0 --ssd-layout chunk:32 --segment 1MiB").unwrap();
    assert_eq!(odd.ssd.layout, WriteLayout::Chunked { pages: 32 });
    let big = config("--ssd-capacity 4GiB --ssd-pages-per-block 512 --ssd-layout chunk").unwrap();
    assert_eq!((big.ssd.pages_per_block, big.ssd.layout), (512, WriteLayout::Chunked { pages: 512 }));
    assert_eq!(config("--ssd-layout page").unwrap().ssd, plain.ssd);
}

#[test]
fn bad_layouts_are_refused_by_name() {
    for bad in ["chunk:0", "chunk:x", "stripe", "page:4"] {
        let e = Line::try_parse_from(["--ssd-layout", bad]).err().expect(bad).to_string();
        assert!(e.contains("--ssd-layout"), "{bad}: {e}");
    }
    let e = config("--ssd sata850pro-blockftl --ssd-layout chunk").unwrap_err();
    assert!(format!("{e:#}").contains("--ssd-layout"), "{e:#}");
}

#[test]
fn default_layout_fields_stay_out_of_the_printed_options() {
    // `swan sim` prints its options and runs record them: a preset's must read as before.
    let json = serde_json::to_string(&config("").unwrap().ssd).unwrap();
    assert!(!json.contains("layout") && !json.contains("gc_frontier"), "{json}");
    let chunked = config("--ssd-layout chunk:64 --ssd-gc-frontier on").unwrap().ssd;
    let back: SsdConfig = serde_json::from_str(&serde_json::to_string(&chunked).unwrap()).unwrap();
    assert_eq!(back, chunked);
}
