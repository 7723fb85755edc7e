//! CPU work kinds. (Placeholder of the shared contract until the CPU part lands: its
//! version of this file wins.)

/// A kind of per-byte CPU work a pool's I/O does.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Kernel {
    Fletcher4,
    Sha256,
    Blake3,
    Crc32c,
    Xor,
    RaidPq,
    RaidPqr,
    AesGcm,
    Lz4,
    Zstd,
}
