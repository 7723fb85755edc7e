//! `iopath measure --cpu`: the storage stack's CPU kernels timed on this machine, one core,
//! in cache, on the buffers the stack hands them, so the rates can stand in for a host
//! part's `cpu_<kernel>_mb_s` figures ([`iopath_model::cpu`]).
//!
//! Implementations, chosen so a measured rate transfers to what a NAS runs:
//! - SHA-256 and AES-256-GCM: the system's OpenSSL libcrypto (`openssl` crate), its
//!   assembly for the SHA extensions, AES-NI with carry-less multiply and VAES: the code
//!   `openssl speed` times and OpenSSL-based servers run. `ring` (BoringSSL's assembly)
//!   agrees for SHA-256 but runs a different AES-GCM (VAES-AVX2) that was 1.5x OpenSSL
//!   3.0's on this project's Xeon, so it is not used; a pure-Rust implementation would time
//!   code no NAS runs.
//! - BLAKE3: the official `blake3` crate (its SSE4.1/AVX2/AVX-512 code), one thread.
//! - CRC32C: the `crc32c` crate (the SSE4.2 `crc32` instruction), per 4 KiB block as btrfs
//!   checksums each sector.
//! - lz4 and zstd: the C libraries (`lz4`, `zstd` crates), one 128 KiB record at a time as
//!   ZFS compresses; zstd at level 3, ZFS's `compression=zstd`.
//! - fletcher4, XOR and the P+Q(+R) syndromes are written here (below): fletcher4 as ZFS's
//!   `zfs_fletcher.c` defines it (four 64-bit running sums over little-endian 32-bit
//!   words), in four interleaved lanes as its `superscalar4` variant runs, without SIMD;
//!   the syndromes as Linux `lib/raid6` computes them in GF(2^8) with generator 2 and
//!   polynomial 0x11d, in its int64 SWAR form unrolled by four (the `raid6: int64x4` boot
//!   line), R with generator 4 as RAIDZ3. The kernel's and ZFS's AVX2/AVX-512 variants are
//!   several times faster; the catalog's parts use their published figures.
//!
//! - memcpy: the C library's `memcpy` (through `copy_from_slice`) of one 8 MiB request at a
//!   time out of a 64 MiB region into one 8 MiB buffer: a file server's copy of a large
//!   file's data from the page cache into its read buffer, or from that buffer into a
//!   socket's (Samba's default `smb2 max read`, [`iopath_model::net`]). The region is larger
//!   than a desktop's last-level cache, so the copy streams from memory as it does on a NAS.
//!
//! Each kernel runs for a bounded amount of the thread's CPU time, and its rate is bytes
//! over that CPU time, as `openssl speed` counts, so time the thread spends descheduled on
//! a shared machine does not count against the kernel. What it computes is
//! deterministic (fixed buffers); only the timing varies.

use iopath_model::catalog::{Figure, Kind, Part, Value};
use iopath_model::cpu::Kernel;
use iopath_model::toml_out::{self, WriteError};
use std::time::{Duration, Instant};

/// A ZFS record: checksums, encryption and compression work on one at a time.
pub const RECORD_BYTES: usize = 128 << 10;
/// A page / btrfs sector: CRC32C runs per block of this size.
pub const PAGE_BYTES: usize = 4 << 10;
/// Data columns of the parity benchmark (a 10-disk RAIDZ2's record: 8 x 16 KiB).
pub const PARITY_COLUMNS: usize = 8;

/// One kernel's measured rate on one core.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelRate {
    pub kernel: Kernel,
    /// Bytes of input per second on one core [MB/s, 10^6 B/s] (parity: data bytes).
    pub mb_s: f64,
    /// The implementation that ran.
    pub implementation: &'static str,
    /// The buffer each call processed, in words.
    pub buffer: &'static str,
    /// Compressed size / input size, for the compressors.
    pub ratio: Option<f64>,
}

/// Benchmarks every kernel for about `seconds` each.
pub fn bench_all(seconds: f64) -> Vec<KernelRate> {
    Kernel::ALL.into_iter().map(|k| bench(k, seconds)).collect()
}

/// Benchmarks one kernel for about `seconds` (0.01..=60 s).
pub fn bench(k: Kernel, seconds: f64) -> KernelRate {
    let budget = Duration::from_secs_f64(seconds.clamp(0.01, 60.0));
    let data = text_like(RECORD_BYTES, 0x1f2e_3d4c);
    let rec = "128 KiB records";
    let (implementation, buffer, ratio, mb_s) = match k {
        Kernel::Fletcher4 => {
            ("fletcher4 superscalar4 (iopath)", rec, None, time(budget, RECORD_BYTES, || fletcher4(&data)[3]))
        }
        Kernel::Sha256 => (
            "OpenSSL libcrypto SHA-256",
            rec,
            None,
            time(budget, RECORD_BYTES, || openssl::sha::sha256(&data)[0].into()),
        ),
        Kernel::Blake3 => (
            "blake3 (official crate, one thread)",
            rec,
            None,
            time(budget, RECORD_BYTES, || u64::from(blake3::hash(&data).as_bytes()[0])),
        ),
        Kernel::Crc32c => (
            "crc32c (SSE4.2)",
            "4 KiB blocks",
            None,
            time(budget, RECORD_BYTES, || data.chunks(PAGE_BYTES).map(|b| u64::from(crc32c::crc32c(b))).sum()),
        ),
        Kernel::Xor | Kernel::RaidPq | Kernel::RaidPqr => parity(k, budget, &data),
        Kernel::AesGcm => aes_gcm(budget, &data),
        Kernel::Lz4 => lz4(budget, &data),
        Kernel::Zstd => zstd3(budget, &data),
        Kernel::Memcpy => memcpy(budget),
    };
    KernelRate { kernel: k, mb_s, implementation, buffer, ratio }
}

/// Runs `f` (which processes `bytes` per call) for `budget` of this thread's CPU time; the
/// rate over it [MB/s of CPU time]. User CPU time, not wall time, as `openssl speed` counts
/// by default: on a shared machine the thread is descheduled at times, and a per-core rate is
/// the bytes per second a core spends on the work. The results feed a sink so the work
/// cannot be optimised away.
fn time(budget: Duration, bytes: usize, mut f: impl FnMut() -> u64) -> f64 {
    let mut sink = 0u64;
    sink = sink.wrapping_add(f()); // warm caches and lazy initialisation
    let budget_s = budget.as_secs_f64();
    // Bounded in wall time too, should the thread get almost no CPU.
    let wall_limit = budget * 20 + Duration::from_secs(1);
    let wall = Instant::now();
    let start = thread_cpu_s();
    let mut calls = 0u64;
    while (thread_cpu_s() - start < budget_s || calls == 0) && wall.elapsed() < wall_limit {
        sink = sink.wrapping_add(f());
        calls += 1;
    }
    let s = (thread_cpu_s() - start).max(1e-9);
    std::hint::black_box(sink);
    calls as f64 * bytes as f64 / s / 1e6
}

/// This thread's user-mode CPU time [s] (`getrusage(RUSAGE_THREAD)`): the kernels run in
/// user mode, and `openssl speed` counts user time too; interrupts and scheduler work the
/// kernel accounts to the thread while it is loaded are left out.
fn thread_cpu_s() -> f64 {
    // SAFETY: `rusage` is plain old data; all-zero bytes are a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage for the duration of the call, and
    // RUSAGE_THREAD is a Linux `who` value since 2.6.26.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    if rc != 0 {
        return 0.0;
    }
    ru.ru_utime.tv_sec as f64 + ru.ru_utime.tv_usec as f64 * 1e-6
}

fn parity(k: Kernel, budget: Duration, data: &[u8]) -> (&'static str, &'static str, Option<f64>, f64) {
    let cols: Vec<&[u8]> = data.chunks(RECORD_BYTES / PARITY_COLUMNS).collect();
    let n = cols[0].len();
    let (mut p, mut q, mut r) = (vec![0u8; n], vec![0u8; n], vec![0u8; n]);
    let buffer = "8 data columns of 16 KiB";
    match k {
        Kernel::Xor => (
            "xor int64x4 (iopath)",
            buffer,
            None,
            time(budget, data.len(), || {
                gen_p(&cols, &mut p);
                u64::from(p[0])
            }),
        ),
        Kernel::RaidPq => (
            "raid6 int64x4 P+Q (iopath, as lib/raid6)",
            buffer,
            None,
            time(budget, data.len(), || {
                gen_pq(&cols, &mut p, &mut q);
                u64::from(q[0])
            }),
        ),
        _ => (
            "raidz3 int64x4 P+Q+R (iopath)",
            buffer,
            None,
            time(budget, data.len(), || {
                gen_pqr(&cols, &mut p, &mut q, &mut r);
                u64::from(r[0])
            }),
        ),
    }
}

fn aes_gcm(budget: Duration, data: &[u8]) -> (&'static str, &'static str, Option<f64>, f64) {
    use openssl::cipher::Cipher;
    use openssl::cipher_ctx::CipherCtx;
    let mut buf = data.to_vec();
    let mut tail = [0u8; 32];
    // One context keyed once, as a filesystem or SMB session keeps its key schedule; each
    // record gets a fresh nonce and its own tag. A failure (none is expected for a valid
    // key and nonce) counts as no output.
    let Ok(mut ctx) = CipherCtx::new() else { return ("OpenSSL libcrypto AES-256-GCM", "", None, 0.0) };
    if ctx.encrypt_init(Some(Cipher::aes_256_gcm()), Some(&[7u8; 32]), None).is_err() {
        return ("OpenSSL libcrypto AES-256-GCM", "", None, 0.0);
    }
    let mut counter = 0u64;
    let rate = time(budget, data.len(), || {
        counter += 1;
        let mut iv = [0u8; 12];
        iv[4..].copy_from_slice(&counter.to_le_bytes());
        if ctx.encrypt_init(None, None, Some(&iv)).is_err() {
            return 0;
        }
        // In place, as `openssl speed` and ZFS's ICP do it.
        let n = ctx.cipher_update_inplace(&mut buf, data.len()).unwrap_or(0);
        let m = ctx.cipher_final(&mut tail).unwrap_or(0);
        let mut tag = [0u8; 16];
        let _ = ctx.tag(&mut tag);
        (n + m) as u64 + u64::from(tag[0])
    });
    ("OpenSSL libcrypto AES-256-GCM", "128 KiB records", None, rate)
}

/// The file server's copy: 8 MiB requests out of a 64 MiB region (the page cache of a large
/// file), each into the same 8 MiB buffer (the server's read buffer). Bytes copied per CPU
/// second.
pub const COPY_REGION_BYTES: usize = 64 << 20;
pub const COPY_REQUEST_BYTES: usize = 8 << 20;

fn memcpy(budget: Duration) -> (&'static str, &'static str, Option<f64>, f64) {
    // Written (not zero pages): every page is backed, as a file's page cache is; what the
    // bytes are does not change a copy.
    let region = vec![0x5au8; COPY_REGION_BYTES];
    let mut buf = vec![0u8; COPY_REQUEST_BYTES];
    let mut at = 0;
    let rate = time(budget, COPY_REQUEST_BYTES, || {
        buf.copy_from_slice(&region[at..at + COPY_REQUEST_BYTES]);
        at = (at + COPY_REQUEST_BYTES) % COPY_REGION_BYTES;
        u64::from(buf[COPY_REQUEST_BYTES - 1])
    });
    ("C library memcpy (copy_from_slice)", "8 MiB requests out of a 64 MiB region", None, rate)
}

fn lz4(budget: Duration, data: &[u8]) -> (&'static str, &'static str, Option<f64>, f64) {
    let mut out = vec![0u8; lz4::block::compress_bound(data.len()).unwrap_or(2 * data.len())];
    let mut size = 0usize;
    let rate = time(budget, data.len(), || {
        size = lz4::block::compress_to_buffer(data, None, false, &mut out).unwrap_or(data.len());
        size as u64
    });
    ("lz4 (C library, default mode)", "128 KiB records", Some(size as f64 / data.len() as f64), rate)
}

fn zstd3(budget: Duration, data: &[u8]) -> (&'static str, &'static str, Option<f64>, f64) {
    let mut c = zstd::bulk::Compressor::new(3).expect("zstd level 3 exists");
    let mut out = vec![0u8; zstd::zstd_safe::compress_bound(data.len())];
    let mut size = 0usize;
    let rate = time(budget, data.len(), || {
        size = c.compress_to_buffer(data, &mut out).unwrap_or(data.len());
        size as u64
    });
    ("zstd level 3 (C library)", "128 KiB records", Some(size as f64 / data.len() as f64), rate)
}

/// Where a part file's figures came from: this machine, on a day.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// The CPU's model name (`/proc/cpuinfo`), or "unknown CPU".
    pub cpu: String,
    /// Logical CPUs the OS offers.
    pub logical_cpus: usize,
    /// The day of the run, `YYYY-MM-DD` (UTC).
    pub date: String,
}

impl Machine {
    /// This machine, today.
    pub fn this() -> Machine {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown CPU".to_string());
        let logical_cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let days =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() / 86_400);
        Machine { cpu, logical_cpus, date: civil_date(days as i64) }
    }
}

/// `YYYY-MM-DD` of a day counted from 1970-01-01 (proleptic Gregorian; H. Hinnant's
/// days-to-civil algorithm, 'chrono-Compatible Low-Level Date Algorithms').
pub fn civil_date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// A part file (the format `iopath fit` writes, loaded with `--parts`) that sets host
/// part `part`'s kernel rates to `rates`, and its `cpu_cores` to `cores` when given, each
/// with basis `measurement` and a source naming the machine, implementation and date.
pub fn part_file(
    part: &str,
    name: &str,
    rates: &[KernelRate],
    cores: Option<(f64, &str)>,
    m: &Machine,
) -> Result<String, WriteError> {
    let mut p = Part {
        id: part.to_string(),
        kind: Kind::Host,
        name: name.to_string(),
        aliases: Vec::new(),
        pci_ids: Vec::new(),
        notes: String::new(),
        figures: Default::default(),
    };
    let measured =
        |value: f64, source: String| Figure { value: Value::Num(value), source, basis: "measurement".into() };
    if let Some((n, why)) = cores {
        let source = format!("{why} ({}, {} logical CPUs)", m.cpu, m.logical_cpus);
        p.figures.insert("cpu_cores".into(), measured(n, source));
    }
    for r in rates {
        let ratio = r.ratio.map(|x| format!(", compressed to {:.3} of the input", x)).unwrap_or_default();
        let source = format!(
            "iopath measure --cpu on {} ({} logical CPUs), {}: {}, one core, {}, bytes per CPU second{ratio}",
            m.cpu, m.logical_cpus, m.date, r.implementation, r.buffer
        );
        p.figures.insert(r.kernel.figure().to_string(), measured((r.mb_s * 10.0).round() / 10.0, source));
    }
    toml_out::part_file(
        &[p],
        &[
            "Written by `iopath measure --cpu`; load it with `iopath --parts FILE ...`.".into(),
            "Measured kernel rates override the catalog's for this host part.".into(),
        ],
    )
}

/// The rates as a text table: per core and over `cores` cores.
pub fn table(rates: &[KernelRate], cores: f64) -> String {
    let mut s = format!(
        "{:<10} {:>11} {:>13}  {:<32} implementation\n",
        "kernel",
        "MB/s/core",
        format!("MB/s x{cores}"),
        "work"
    );
    for r in rates {
        let ratio = r.ratio.map(|x| format!(" (ratio {:.2})", 1.0 / x)).unwrap_or_default();
        s += &format!(
            "{:<10} {:>11.0} {:>13.0}  {:<32} {}, {}{ratio}\n",
            r.kernel.name(),
            r.mb_s,
            r.mb_s * cores,
            r.kernel.describe(),
            r.implementation,
            r.buffer
        );
    }
    s
}

/// Deterministic text-like bytes: words from a small vocabulary, picked by a fixed
/// xorshift stream with a skew towards the first words, so the compressors see data of a
/// ratio like ordinary files (about 2-3x) rather than zeros or noise.
pub fn text_like(len: usize, seed: u64) -> Vec<u8> {
    const WORDS: [&str; 32] = [
        "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with", "be", "by", "on", "not",
        "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an", "had", "they", "you", "were",
    ];
    let mut s = seed | 1;
    let mut out = Vec::with_capacity(len + 16);
    while out.len() < len {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        // Two draws, the smaller kept: a skew towards the common words.
        let i = ((s & 31) as usize).min(((s >> 5) & 31) as usize);
        out.extend_from_slice(WORDS[i].as_bytes());
        out.push(if s >> 60 == 0 { b'\n' } else { b' ' });
        if (s >> 40) & 63 == 0 {
            out.extend_from_slice(format!("{} ", s % 100_000).as_bytes());
        }
    }
    out.truncate(len);
    out
}

/// Lanes of the fletcher4 loop.
const LANES: usize = 4;

/// ZFS's fletcher4 of `buf` (its length a multiple of 4): `[a, b, c, d]` where, over the
/// little-endian 32-bit words in order, `a += w; b += a; c += b; d += c` (64-bit, wrapping).
/// Computed in four interleaved lanes and combined exactly ([`lane_weights`]).
pub fn fletcher4(buf: &[u8]) -> [u64; 4] {
    let words = buf.len() / 4;
    let body = words / LANES * LANES;
    let mut acc = [[0u64; LANES]; 4];
    for chunk in buf[..body * 4].chunks_exact(4 * LANES) {
        for (j, w) in chunk.chunks_exact(4).enumerate() {
            let w = u64::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
            acc[0][j] = acc[0][j].wrapping_add(w);
            acc[1][j] = acc[1][j].wrapping_add(acc[0][j]);
            acc[2][j] = acc[2][j].wrapping_add(acc[1][j]);
            acc[3][j] = acc[3][j].wrapping_add(acc[2][j]);
        }
    }
    let mut s = [0u64; 4];
    let lanes = (0..LANES).map(|j| (j, [acc[0][j], acc[1][j], acc[2][j], acc[3][j]]));
    for (j, lane) in lanes {
        for (out, wts) in s.iter_mut().zip(lane_weights(j)) {
            for (&x, w) in lane.iter().zip(wts) {
                *out = out.wrapping_add(x.wrapping_mul(w as u64));
            }
        }
    }
    fletcher4_continue(s, &buf[body * 4..words * 4])
}

/// The scalar loop from a running state: the definition, and the tail of [`fletcher4`].
pub fn fletcher4_continue(mut s: [u64; 4], buf: &[u8]) -> [u64; 4] {
    for w in buf.chunks_exact(4) {
        let w = u64::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
        s[0] = s[0].wrapping_add(w);
        s[1] = s[1].wrapping_add(s[0]);
        s[2] = s[2].wrapping_add(s[1]);
        s[3] = s[3].wrapping_add(s[2]);
    }
    s
}

/// How lane `j`'s sums `[a_j, b_j, c_j, d_j]` enter the whole buffer's `[A, B, C, D]`:
/// `out[s][t]` is the weight of lane sum `t` in sum `s`.
///
/// Derivation: a word `x` words from the end of the buffer (itself counted) enters the sums
/// with weights `e_s(x) = C(x+s-1, s)`: 1, x, C(x+1,2), C(x+2,3). In lane `j` (words
/// `j, j+L, ...` of `L` lanes) a word `r` lane-words from its lane's end has lane weights
/// `e_t(r)` and is `x = L r - j` words from the buffer's end. `e_s(L r - j)` is a
/// polynomial of degree `s` in `r`, so it is exactly a combination of `e_0..e_3`; its
/// coefficients follow from the values at r = 0, -1, -2, -3, where `e_t(-u) = 0` for
/// `u < t` (a lower-triangular system whose diagonal `e_u(-u)` is +-1, so integer).
fn lane_weights(j: usize) -> [[i64; 4]; 4] {
    let l = LANES as i64;
    let j = j as i64;
    let e = |x: i64, k: usize| -> i64 {
        match k {
            0 => 1,
            1 => x,
            2 => x * (x + 1) / 2,
            _ => x * (x + 1) * (x + 2) / 6,
        }
    };
    let mut out = [[0i64; 4]; 4];
    for (s, row) in out.iter_mut().enumerate() {
        for u in 0..4usize {
            let r = -(u as i64);
            let known: i64 = (0..u).map(|t| row[t] * e(r, t)).sum();
            row[u] = (e(l * r - j, s) - known) / e(r, u);
        }
    }
    out
}

/// SWAR GF(2^8) doubling of 8 bytes at once, polynomial 0x11d: shift each byte left and
/// reduce the bytes whose top bit fell out.
#[inline(always)]
fn mul2(w: u64) -> u64 {
    let hi = w & 0x8080_8080_8080_8080;
    let mask = (hi << 1).wrapping_sub(hi >> 7);
    ((w << 1) & 0xfefe_fefe_fefe_fefe) ^ (mask & 0x1d1d_1d1d_1d1d_1d1d)
}

#[inline(always)]
fn word(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"))
}

fn put(b: &mut [u8], i: usize, w: u64) {
    b[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
}

/// P = D_0 ^ D_1 ^ ... (columns of equal length, a multiple of 8 bytes).
pub fn gen_p(cols: &[&[u8]], p: &mut [u8]) {
    for i in 0..p.len() / 8 {
        let w = cols.iter().fold(0u64, |acc, c| acc ^ word(c, i));
        put(p, i, w);
    }
}

/// P and Q = sum of 2^z D_z over GF(2^8), by Horner's rule from the highest column, four
/// words at a time (lib/raid6's int64x4 shape).
pub fn gen_pq(cols: &[&[u8]], p: &mut [u8], q: &mut [u8]) {
    let z0 = cols.len() - 1;
    let words = p.len() / 8;
    let mut i = 0;
    while i + 4 <= words {
        let mut wp = [0u64; 4];
        let mut wq = [0u64; 4];
        for u in 0..4 {
            wp[u] = word(cols[z0], i + u);
            wq[u] = wp[u];
        }
        for z in (0..z0).rev() {
            for u in 0..4 {
                let d = word(cols[z], i + u);
                wp[u] ^= d;
                wq[u] = mul2(wq[u]) ^ d;
            }
        }
        for u in 0..4 {
            put(p, i + u, wp[u]);
            put(q, i + u, wq[u]);
        }
        i += 4;
    }
    for i in i..words {
        let (mut wp, mut wq) = (word(cols[z0], i), word(cols[z0], i));
        for z in (0..z0).rev() {
            let d = word(cols[z], i);
            wp ^= d;
            wq = mul2(wq) ^ d;
        }
        put(p, i, wp);
        put(q, i, wq);
    }
}

/// P, Q and R = sum of 4^z D_z (RAIDZ3's third parity), as [`gen_pq`].
pub fn gen_pqr(cols: &[&[u8]], p: &mut [u8], q: &mut [u8], r: &mut [u8]) {
    let z0 = cols.len() - 1;
    for i in 0..p.len() / 8 {
        let first = word(cols[z0], i);
        let (mut wp, mut wq, mut wr) = (first, first, first);
        for z in (0..z0).rev() {
            let d = word(cols[z], i);
            wp ^= d;
            wq = mul2(wq) ^ d;
            wr = mul2(mul2(wr)) ^ d;
        }
        put(p, i, wp);
        put(q, i, wq);
        put(r, i, wr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le_words(ws: &[u32]) -> Vec<u8> {
        ws.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn fletcher4_of_small_buffers_by_hand() {
        // Words 1, 2, 3: a = 1, 3, 6; b = 1, 4, 10; c = 1, 5, 15; d = 1, 6, 21.
        assert_eq!(fletcher4(&le_words(&[1, 2, 3])), [6, 10, 15, 21]);
        // Eight words of 1 (two full rounds of the four lanes): a = n = 8, b = sum of
        // 1..8 = 36, c = sum of C(k+1,2) for k = 1..8 = C(10,3) = 120, d = C(11,4) = 330.
        assert_eq!(fletcher4(&le_words(&[1; 8])), [8, 36, 120, 330]);
        // A word is little-endian: bytes 01 00 00 00 are 1, 00 00 00 01 are 2^24.
        assert_eq!(fletcher4(&[0, 0, 0, 1])[0], 1 << 24);
        assert_eq!(fletcher4(&[]), [0; 4]);
    }

    #[test]
    fn fletcher4_lanes_equal_the_definition() {
        let data = text_like(RECORD_BYTES + 12, 99);
        for len in [0, 4, 12, 16, 20, 64, 1000, RECORD_BYTES, RECORD_BYTES + 12] {
            let b = &data[..len];
            assert_eq!(fletcher4(b), fletcher4_continue([0; 4], b), "length {len}");
        }
        // Large words wrap the 64-bit sums the same way in both.
        let big = vec![0xffu8; 1 << 16];
        assert_eq!(fletcher4(&big), fletcher4_continue([0; 4], &big));
    }

    #[test]
    fn parity_of_two_data_bytes_by_hand() {
        // D0 = 0x01, D1 = 0x80 in the first byte of each 8-byte column.
        // P = 0x01 ^ 0x80 = 0x81.
        // Q = D0 + 2 D1: 2 x 0x80 = 0x100, reduced by 0x11d -> 0x1d; 0x01 ^ 0x1d = 0x1c.
        // R = D0 + 4 D1: 2 x 0x1d = 0x3a (no overflow); 0x01 ^ 0x3a = 0x3b.
        let d0 = [0x01u8, 0, 0, 0, 0, 0, 0, 0];
        let d1 = [0x80u8, 0, 0, 0, 0, 0, 0, 0];
        let cols: [&[u8]; 2] = [&d0, &d1];
        let (mut p, mut q, mut r) = ([0u8; 8], [0u8; 8], [0u8; 8]);
        gen_pq(&cols, &mut p, &mut q);
        assert_eq!((p[0], q[0]), (0x81, 0x1c));
        let mut p1 = [0u8; 8];
        gen_p(&cols, &mut p1);
        assert_eq!(p1[0], 0x81);
        gen_pqr(&cols, &mut p, &mut q, &mut r);
        assert_eq!((p[0], q[0], r[0]), (0x81, 0x1c, 0x3b));
        assert!(p[1..].iter().chain(&q[1..]).chain(&r[1..]).all(|&b| b == 0));
    }

    /// Q recovers a lost data column: with D1 lost, D1 = (Q ^ D0 ^ 4 D2) / 2 over GF(2^8);
    /// checked byte by byte against a table-free multiply, on the benchmark's own data, so
    /// the unrolled body and the tail agree with the field arithmetic.
    #[test]
    fn pq_matches_bytewise_field_arithmetic() {
        fn gmul(mut a: u8, mut b: u8) -> u8 {
            let mut p = 0u8;
            while b != 0 {
                if b & 1 == 1 {
                    p ^= a;
                }
                let hi = a & 0x80;
                a <<= 1;
                if hi != 0 {
                    a ^= 0x1d;
                }
                b >>= 1;
            }
            p
        }
        let data = text_like(3 * 8 * 7, 5); // 7 words per column: 4 unrolled + 3 tail
        let cols: Vec<&[u8]> = data.chunks(56).collect();
        let (mut p, mut q, mut r) = (vec![0u8; 56], vec![0u8; 56], vec![0u8; 56]);
        gen_pq(&cols, &mut p, &mut q);
        for i in 0..56 {
            let (d0, d1, d2) = (cols[0][i], cols[1][i], cols[2][i]);
            assert_eq!(p[i], d0 ^ d1 ^ d2);
            assert_eq!(q[i], d0 ^ gmul(2, d1) ^ gmul(4, d2), "byte {i}");
        }
        gen_pqr(&cols, &mut p, &mut q, &mut r);
        for i in 0..56 {
            let (d0, d1, d2) = (cols[0][i], cols[1][i], cols[2][i]);
            assert_eq!(r[i], d0 ^ gmul(4, d1) ^ gmul(16, d2), "byte {i}");
        }
    }

    #[test]
    fn text_like_compresses_like_ordinary_files() {
        let r = bench(Kernel::Lz4, 0.02);
        let ratio = r.ratio.unwrap();
        assert!(ratio > 0.2 && ratio < 0.7, "lz4 ratio {ratio}");
        assert!(r.mb_s > 0.0);
    }

    #[test]
    fn memcpy_times_a_copy_out_of_cache() {
        // Any x86 core of the last decade copies a few GB/s out of DRAM (the catalog's
        // figures: 5,556 to 11,364 MB/s) and none copies 8 MiB requests faster than its L1
        // bandwidth, ~200 GB/s; a debug build's copy_from_slice is the same libc memcpy.
        let r = bench(Kernel::Memcpy, 0.05);
        assert!(r.mb_s > 300.0 && r.mb_s < 200_000.0, "memcpy {} MB/s", r.mb_s);
        assert!(r.buffer.contains("8 MiB") && r.ratio.is_none());
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        // 2000-03-01 is day 11,017 (30 years of 365 days, 7 leap days to 1999, plus
        // January and February 2000: 10,957 + 31 + 29).
        assert_eq!(civil_date(11_017), "2000-03-01");
        assert_eq!(civil_date(11_016), "2000-02-29");
    }

    #[test]
    fn the_part_file_loads_over_the_catalog() {
        let m = Machine { cpu: "Test CPU".into(), logical_cpus: 2, date: "2026-01-01".into() };
        let rates: Vec<KernelRate> = Kernel::ALL
            .into_iter()
            .map(|k| KernelRate { kernel: k, mb_s: 1234.56, implementation: "x", buffer: "y", ratio: None })
            .collect();
        let text = part_file("generic-host", "Generic x86 host", &rates, Some((2.0, "--cores 2")), &m).unwrap();
        let mut cat = iopath_model::Catalog::builtin();
        cat.overlay("host.toml", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let p = cat.get("generic-host").unwrap();
        let f = &p.figures["cpu_sha256_mb_s"];
        assert_eq!(f.value, iopath_model::catalog::Value::Num(1234.6));
        assert_eq!(f.basis, "measurement");
        assert!(f.source.contains("Test CPU") && f.source.contains("2026-01-01"), "{}", f.source);
        assert_eq!(p.figures["cpu_cores"].value, iopath_model::catalog::Value::Num(2.0));
    }
}
