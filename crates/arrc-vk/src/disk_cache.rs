//! Caches kept on disk between processes: the driver's pipeline cache, so that a
//! second process running the same statements does not compile their pipelines
//! again, and (for the `arrc` crate) validated SPIR-V modules.
//!
//! Under `$ARRC_CACHE_DIR`, else `$XDG_CACHE_HOME/arrc`, else `$HOME/.cache/arrc`
//! (`ARRC_PIPELINE_CACHE=0` turns both off). Each file is arrc's own header (magic,
//! payload length, FNV-1a checksum of the payload) and then the payload. The pipeline
//! cache (one file per device, driver and arrc version) is what
//! `vkGetPipelineCacheData` gave; it is used only when the header, the checksum and
//! the Vulkan cache header (version one, this device's vendor and device IDs and
//! pipeline-cache UUID) all agree: drivers are not required to survive corrupt data,
//! so a truncated, foreign or damaged file is ignored (and replaced when the context
//! closes), never handed to the driver. Writes go to a temporary file renamed into
//! place, so a crash mid-write leaves the old file.

use ash::vk;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"ARRCPC01";
/// Magic, payload length, checksum.
const HEADER: usize = 8 + 8 + 8;
/// Pipeline caches larger than this are not written (nor read).
const MAX_BYTES: u64 = 256 << 20;

/// The directory of arrc's caches, or `None` when caching is off or none can be
/// named.
pub fn cache_dir() -> Option<PathBuf> {
    if std::env::var("ARRC_PIPELINE_CACHE").is_ok_and(|v| v == "0") {
        return None;
    }
    Some(if let Some(d) = std::env::var_os("ARRC_CACHE_DIR") {
        PathBuf::from(d)
    } else if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        PathBuf::from(d).join("arrc")
    } else {
        PathBuf::from(std::env::var_os("HOME")?).join(".cache/arrc")
    })
}

/// The cache file for this device and driver, or `None` when caching is off or no
/// cache directory can be named.
pub(crate) fn path_for(props: &vk::PhysicalDeviceProperties) -> Option<PathBuf> {
    let dir = cache_dir()?;
    let uuid: String = props
        .pipeline_cache_uuid
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Some(dir.join(format!(
        "pipelines-{:04x}-{:04x}-{:x}-{uuid}-arrc{}.bin",
        props.vendor_id,
        props.device_id,
        props.driver_version,
        env!("CARGO_PKG_VERSION")
    )))
}

/// The cache data stored at `path` for a device with `props`, or nothing when the
/// file is missing or fails any check.
pub(crate) fn load(path: &Path, props: &vk::PhysicalDeviceProperties) -> Vec<u8> {
    load_checked(path)
        .filter(|data| vulkan_header_matches(data, props))
        .unwrap_or_default()
}

/// The payload of the file at `path` written by [`save`], or `None` when it is
/// missing, truncated, damaged or too large.
pub fn load_checked(path: &Path) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok()?;
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return None;
    }
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
    let (len, sum) = (word(8), word(16));
    let data = &bytes[HEADER..];
    if len != data.len() as u64 || len > MAX_BYTES || fnv1a(data) != sum {
        return None;
    }
    Some(data.to_vec())
}

/// Whether `data` starts with a version-one Vulkan pipeline cache header of this
/// device (32 bytes: length, version, vendor ID, device ID, UUID).
fn vulkan_header_matches(data: &[u8], props: &vk::PhysicalDeviceProperties) -> bool {
    if data.len() < 32 {
        return false;
    }
    let u32_at = |at: usize| u32::from_le_bytes(data[at..at + 4].try_into().unwrap_or([0; 4]));
    let header_len = u32_at(0) as usize;
    header_len >= 32
        && header_len <= data.len()
        && u32_at(4) == vk::PipelineCacheHeaderVersion::ONE.as_raw() as u32
        && u32_at(8) == props.vendor_id
        && u32_at(12) == props.device_id
        && data[16..32] == props.pipeline_cache_uuid
}

/// Writes `data` as the cache file at `path` (through a temporary file). Failures
/// are ignored: the cache is an optimisation.
pub fn save(path: &Path, data: &[u8]) {
    if data.is_empty() || data.len() as u64 > MAX_BYTES {
        return;
    }
    let Some(dir) = path.parent() else {
        return;
    };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let mut bytes = Vec::with_capacity(HEADER + data.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(data.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&fnv1a(data).to_le_bytes());
    bytes.extend_from_slice(data);
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    if std::fs::write(&tmp, &bytes).is_ok() && std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// 64-bit FNV-1a: enough to tell a damaged file from a whole one.
pub fn fnv1a(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props() -> vk::PhysicalDeviceProperties {
        vk::PhysicalDeviceProperties {
            vendor_id: 0x10de,
            device_id: 0x2330,
            pipeline_cache_uuid: [7; 16],
            ..Default::default()
        }
    }

    fn vulkan_data(p: &vk::PhysicalDeviceProperties) -> Vec<u8> {
        let mut d = vec![];
        d.extend_from_slice(&32u32.to_le_bytes());
        d.extend_from_slice(&1u32.to_le_bytes());
        d.extend_from_slice(&p.vendor_id.to_le_bytes());
        d.extend_from_slice(&p.device_id.to_le_bytes());
        d.extend_from_slice(&p.pipeline_cache_uuid);
        d.extend_from_slice(b"driver data");
        d
    }

    #[test]
    fn a_whole_file_round_trips_and_a_damaged_one_is_ignored() {
        let dir = std::env::temp_dir().join(format!("arrc-disk-cache-{}", std::process::id()));
        let path = dir.join("c.bin");
        let p = props();
        let data = vulkan_data(&p);
        save(&path, &data);
        assert_eq!(load(&path, &p), data);
        let whole = std::fs::read(&path).unwrap();
        // Every truncation, and a flipped bit anywhere, is refused.
        for cut in 0..whole.len() {
            std::fs::write(&path, &whole[..cut]).unwrap();
            assert!(load(&path, &p).is_empty(), "cut at {cut}");
        }
        for i in 0..whole.len() {
            let mut bad = whole.clone();
            bad[i] ^= 0x10;
            std::fs::write(&path, &bad).unwrap();
            assert!(load(&path, &p).is_empty(), "bit flipped in byte {i}");
        }
        // Another device's cache, even with a valid checksum.
        let other = vk::PhysicalDeviceProperties {
            device_id: 1,
            ..props()
        };
        save(&path, &vulkan_data(&other));
        assert!(load(&path, &p).is_empty());
        assert!(load(&dir.join("missing.bin"), &p).is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
