//! Run-time CPU feature detection for the kernels that have a build compiled for
//! wider vector units (the micro-average cell filter, the label-ranking row block).
//! The dispatched builds perform the same operations in the same order as the
//! generic ones, so results never depend on the CPU.

/// Whether the CPU has AVX2, BMI1 and POPCNT: the features of the run-time
/// dispatched kernels (`binary::micro_scan`'s cell filter, `ranking`'s row block).
/// The standard library caches the detection.
pub fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("popcnt")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}
