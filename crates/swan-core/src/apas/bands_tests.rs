//! Fig. 2 and Algorithm 2 on hand-built band tables (bands of 100 blocks).

use super::*;

fn band(band: u32, valid: u32, invalid: u32, valid_front: u32) -> BandState {
    BandState { band, valid, invalid, free: 100 - valid - invalid, valid_front }
}

fn policy() -> GcPolicy {
    GcPolicy::new(GcConfig::default()).unwrap()
}

#[test]
fn the_five_types_of_fig_2() {
    let p = policy();
    let class = |b| p.classify(&b);
    assert_eq!(class(band(0, 0, 0, 0)), None, "a free band has no type");
    assert_eq!(class(band(0, 5, 95, 5)), Some(BandClass::A), "nearly all invalid");
    assert_eq!(class(band(0, 10, 90, 0)), Some(BandClass::A), "exactly 90 % invalid");
    assert_eq!(class(band(0, 11, 89, 0)), Some(BandClass::C), "just short of A: valid all in the back");
    assert_eq!(class(band(0, 95, 5, 50)), Some(BandClass::B), "nearly all valid");
    assert_eq!(class(band(0, 9, 1, 5)), Some(BandClass::B), "a partly written band: of its written blocks");
    assert_eq!(class(band(0, 50, 50, 10)), Some(BandClass::C), "valid mainly in the back half");
    assert_eq!(class(band(0, 50, 50, 40)), Some(BandClass::D), "valid mainly in the front half");
    assert_eq!(class(band(0, 40, 60, 30)), Some(BandClass::D), "exactly 3/4 in front");
    assert_eq!(class(band(0, 40, 60, 10)), Some(BandClass::C), "exactly 3/4 behind");
    assert_eq!(class(band(0, 50, 50, 25)), Some(BandClass::E), "across the whole band");
    assert_eq!(class(band(0, 40, 60, 29)), Some(BandClass::E), "just short of D");
}

#[test]
fn weights_are_algorithm_2s() {
    use BandClass::*;
    let w: Vec<u8> = [B, E, C, D, A].iter().map(|c| c.weight()).collect();
    assert_eq!(w, [0, 1, 2, 3, 4]);
}

#[test]
fn victims_by_weight_then_fewer_valid_blocks() {
    let table = [
        band(0, 95, 5, 50),  // B
        band(1, 50, 50, 25), // E
        band(2, 50, 50, 10), // C, 50 valid
        band(3, 30, 70, 5),  // C, 30 valid
        band(4, 50, 50, 40), // D
        band(5, 5, 95, 5),   // A, 5 valid
        band(6, 2, 98, 0),   // A, 2 valid
        band(7, 100, 0, 50), // B without an invalid block: cleaning it frees nothing
        band(8, 0, 0, 0),    // free
        band(9, 30, 70, 5),  // C, 30 valid, a higher band number than 3
    ];
    let order: Vec<(u32, BandClass)> = policy().victims(&table).iter().map(|v| (v.band, v.class)).collect();
    use BandClass::*;
    assert_eq!(order, [(6, A), (5, A), (4, D), (3, C), (9, C), (2, C), (1, E), (0, B)]);
}

fn table() -> Vec<BandState> {
    vec![
        band(0, 95, 5, 50),  // B, 5 invalid
        band(1, 50, 50, 25), // E, 50 invalid
        band(2, 50, 50, 10), // C, 50 invalid
        band(3, 5, 95, 5),   // A, 95 invalid
    ]
}

#[test]
fn no_cleaning_when_busy_and_space_is_enough() {
    // 1000 blocks, 200 free: exactly 20 %, not below it.
    let plan = policy().plan(&table(), 200, 1000, false);
    assert_eq!((plan.mode, plan.clean_now), (CleaningMode::None, 0));
    assert_eq!(plan.victims.len(), 4, "the order is given all the same");
}

#[test]
fn lazy_cleaning_below_20_percent_cleans_just_enough() {
    let p = policy();
    // 199 free of 1000: one block short; A alone (95 invalid) brings it back.
    let plan = p.plan(&table(), 199, 1000, false);
    assert_eq!((plan.mode, plan.clean_now), (CleaningMode::Lazy, 1));
    assert_eq!(plan.now()[0].band, 3);
    // 100 free: 100 short; A (95) then C (50).
    let plan = p.plan(&table(), 100, 1000, false);
    assert_eq!(plan.now().iter().map(|v| v.band).collect::<Vec<_>>(), [3, 2]);
    // Nothing free: every victim, B last.
    let plan = p.plan(&table(), 0, 1000, false);
    assert_eq!(plan.clean_now, 4);
}

#[test]
fn aggressive_cleaning_in_idle_time_takes_a_d_c_and_more_if_space_is_short() {
    let p = policy();
    let plan = p.plan(&table(), 900, 1000, true);
    assert_eq!((plan.mode, plan.clean_now), (CleaningMode::Aggressive, 2), "A and C, not E or B");
    let plan = p.plan(&table(), 0, 1000, true);
    assert_eq!((plan.mode, plan.clean_now), (CleaningMode::Aggressive, 4), "lazy's need wins when larger");
    let all = GcPolicy::new(GcConfig { aggressive_min_weight: 0, ..GcConfig::default() }).unwrap();
    assert_eq!(all.plan(&table(), 900, 1000, true).clean_now, 4);
}

#[test]
fn lazy_target_above_the_threshold_cleans_further() {
    let p = GcPolicy::new(GcConfig { lazy_target_percent: 30, ..GcConfig::default() }).unwrap();
    // 199 free, target 300: A (95) → 294, C (50) → 344.
    assert_eq!(p.plan(&table(), 199, 1000, false).clean_now, 2);
}

#[test]
fn impossible_configurations_are_errors() {
    let e = |cfg| GcPolicy::new(cfg).unwrap_err().to_string();
    let d = GcConfig::default();
    assert_eq!(
        e(GcConfig { nearly_all_percent: 50, ..d }),
        "GC policy: nearly_all_percent 50 must be above 50 and at most 100"
    );
    assert_eq!(
        e(GcConfig { lazy_threshold_percent: 0, ..d }),
        "GC policy: lazy_threshold_percent 0 must be above 0 and at most 100"
    );
    assert_eq!(
        e(GcConfig { lazy_target_percent: 10, ..d }),
        "GC policy: lazy_target_percent 10 must be at least lazy_threshold_percent 20"
    );
    assert_eq!(
        e(GcConfig { aggressive_min_weight: 5, ..d }),
        "GC policy: aggressive_min_weight 5 exceeds the highest weight (4, type A)"
    );
}

#[test]
#[should_panic(expected = "band 7: 6 valid in the front half of 5 valid")]
fn inconsistent_counts_are_a_bug_of_the_driver() {
    policy().classify(&band(7, 5, 5, 6));
}
