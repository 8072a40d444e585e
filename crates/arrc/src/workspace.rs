//! The device-resident workspace: an array a statement assigns on the device stays a
//! device buffer, with its shape and type, until the host needs its values (display,
//! [`Session::get`], the CPU reference, a value that steers the host). Host-made
//! arrays are uploaded once and kept beside their host copy.
//!
//! Invariants (names of `Session::env.arrays`, the host copies, and of
//! `Gpu::resident`, the device copies):
//! - A workspace array is in one map or both; where it is in both, the two hold the
//!   same value. Small arrays (at most [`HOST_COPY_LIMIT`] elements, which lowering
//!   reads as known values) always have a host copy: they come back in the readback
//!   of the status word.
//! - Nothing writes a device array after it was made: kernels write only their own
//!   buffers (`BufferRole::Temp`/`Result`), so names may share one (`a←b←x`, `y←x`).
//!   The one exception is an indexed assignment `x[I]←V` of an array that nothing
//!   but the workspace's `x` holds (no other name, no recipe): its scatter writes
//!   that buffer in place (`Gpu::consumable`, `Plan::in_place`), and stores nothing
//!   if an earlier kernel of the statement raised an error.
//! - Before the CPU reference runs a statement, every array it can read has a host
//!   copy (its names and those of the functions it calls; all, where `⍎` may read
//!   any: `Session::materialize_reads`); after,
//!   the device copies of the names the statement mentions are dropped (the
//!   reference may have assigned them).
//! - Resident bytes stay within the budget (`Gpu::budget`): past it, the least
//!   recently used arrays go back to the host. A device allocation that fails for
//!   memory sends every array back to the host and the statement runs once more.

use crate::gpu::{dev, Gpu};
use crate::Session;
use arrc_ir::{Array, Data, ElemType, Error};
use arrc_vk::Buffer;
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Arrays up to this many elements always have a host copy.
pub const HOST_COPY_LIMIT: usize = 64;

/// An array in device memory, never written once made.
pub struct DeviceArray {
    pub(crate) buffer: Buffer,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Its element type.
    pub elem: ElemType,
    /// The statement count when it was last read or made (for eviction).
    last_use: Cell<u64>,
    /// A bound on the magnitude of its items, where they are integers and the IR
    /// of the statement that made them showed one (`arrc_ir::bounds`); set anew
    /// when a scatter writes it in place.
    magnitude: Cell<Option<u128>>,
}

impl DeviceArray {
    /// Its element count.
    pub fn len(&self) -> usize {
        arrc_ir::array::saturating_count(&self.shape)
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A bound on the magnitude of its items, where one is known.
    pub fn magnitude(&self) -> Option<u128> {
        self.magnitude.get()
    }

    /// Its items were written in place by the statement whose result's bound is
    /// `m`.
    pub(crate) fn set_magnitude(&self, m: Option<u128>) {
        self.magnitude.set(m);
    }

    /// Its bytes in device memory.
    pub fn bytes(&self) -> u64 {
        (self.len() * self.elem.size()) as u64
    }
}

/// A statement's free name: its value on the host, on the device, or both.
#[derive(Clone)]
pub struct Arg<'a> {
    /// Its value on the host, if it has one there.
    pub host: Option<&'a Array>,
    /// Its device array, if it is on the device.
    pub device: Option<Rc<DeviceArray>>,
}

impl<'a> Arg<'a> {
    /// A name whose value is only on the host.
    pub fn host(a: &'a Array) -> Arg<'a> {
        Arg {
            host: Some(a),
            device: None,
        }
    }

    /// Its element type.
    pub fn elem(&self) -> ElemType {
        match (self.host, &self.device) {
            (Some(a), _) => a.elem,
            (None, Some(d)) => d.elem,
            (None, None) => ElemType::Bool,
        }
    }

    /// Its shape.
    pub fn shape(&self) -> &[usize] {
        match (self.host, &self.device) {
            (Some(a), _) => &a.shape,
            (None, Some(d)) => &d.shape,
            (None, None) => &[],
        }
    }

    /// Its element count.
    pub fn len(&self) -> usize {
        arrc_ir::array::saturating_count(self.shape())
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Workspace arrays uploaded for a statement, now device arrays, by name.
pub(crate) type Uploaded = Vec<(String, Rc<DeviceArray>)>;

/// Arrays by name, borrowed (a statement's free names).
pub type Names<'a> = HashMap<String, Arg<'a>>;

/// Host arrays as [`Names`].
pub fn host_names(arrays: &HashMap<String, Array>) -> Names<'_> {
    arrays
        .iter()
        .map(|(n, a)| (n.clone(), Arg::host(a)))
        .collect()
}

/// A value the device path computed: on the host, on the device, or both.
#[derive(Clone, Default)]
pub(crate) struct Val {
    pub host: Option<Array>,
    pub device: Option<Rc<DeviceArray>>,
}

impl From<Array> for Val {
    fn from(a: Array) -> Val {
        Val {
            host: Some(a),
            device: None,
        }
    }
}

impl Gpu {
    /// A device array of `buffer`, which holds `shape`'s elements of `elem`.
    pub(crate) fn adopt(
        &mut self,
        buffer: Buffer,
        shape: Vec<usize>,
        elem: ElemType,
    ) -> Rc<DeviceArray> {
        let d = Rc::new(DeviceArray {
            buffer,
            shape,
            elem,
            last_use: Cell::new(self.clock),
            magnitude: Cell::new(None),
        });
        self.owned.push(d.clone());
        d
    }

    /// A device array of `buffer` that holds the result of the statement `ir`:
    /// with the bound the IR shows on its items' magnitude.
    pub(crate) fn adopt_result(
        &mut self,
        buffer: Buffer,
        shape: Vec<usize>,
        elem: ElemType,
        ir: &arrc_ir::ir::Function,
    ) -> Rc<DeviceArray> {
        let d = self.adopt(buffer, shape, elem);
        d.magnitude.set(arrc_ir::bounds::result_magnitude(ir));
        d
    }

    /// Marks `d` as used now.
    pub(crate) fn touch(&self, d: &DeviceArray) {
        d.last_use.set(self.clock);
    }

    /// Frees the device arrays nothing holds any more.
    pub(crate) fn collect(&mut self) {
        let mut keep = Vec::with_capacity(self.owned.len());
        for d in std::mem::take(&mut self.owned) {
            if Rc::strong_count(&d) > 1 {
                keep.push(d);
            } else if let Ok(d) = Rc::try_unwrap(d) {
                self.ctx.free_buffer(d.buffer);
            }
        }
        self.owned = keep;
    }

    /// The bytes of the device arrays held now.
    pub(crate) fn resident_bytes(&self) -> u64 {
        self.owned.iter().map(|d| d.buffer.size()).sum()
    }

    pub(crate) fn resident_arrays(&self) -> usize {
        self.owned.len()
    }

    /// Reads a device array back (one readback).
    pub(crate) fn read(&mut self, d: &DeviceArray) -> Result<Array, Error> {
        let t = std::time::Instant::now();
        let bytes = self.ctx.download(&d.buffer, d.bytes()).map_err(dev);
        self.stats.readback_ns += t.elapsed().as_nanos() as u64;
        let bytes = bytes?;
        self.stats.readbacks += 1;
        self.stats.readback_bytes += d.bytes();
        Ok(Array::new(
            d.shape.clone(),
            Data::from_bytes(d.elem, &bytes, d.len()),
        ))
    }

    /// A device array of `shape` and `elem` holding `bytes` (one upload).
    pub(crate) fn upload_bytes(
        &mut self,
        shape: Vec<usize>,
        elem: ElemType,
        bytes: &[u8],
    ) -> Result<Rc<DeviceArray>, Error> {
        let b = self
            .ctx
            .create_buffer((bytes.len() as u64).max(4))
            .map_err(dev)?;
        let t = std::time::Instant::now();
        if let Err(e) = self.ctx.upload(&b, bytes) {
            self.ctx.free_buffer(b);
            return Err(dev(e));
        }
        self.stats.upload_ns += t.elapsed().as_nanos() as u64;
        self.stats.uploads += 1;
        self.stats.upload_bytes += bytes.len() as u64;
        Ok(self.adopt(b, shape, elem))
    }

    /// Frees every device array (the session is closing).
    pub(crate) fn drop_all(&mut self) {
        self.resident.clear();
        self.collect();
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        self.drop_all();
    }
}

/// The names in `map` bound to `x` itself (`a←b←…` binds two names to one value).
pub(crate) fn sharing<T>(map: &HashMap<String, Rc<T>>, x: &Rc<T>) -> Vec<String> {
    map.iter()
        .filter(|(_, y)| Rc::ptr_eq(y, x))
        .map(|(n, _)| n.clone())
        .collect()
}

/// The workspace's arrays as a statement's free names: host copies (`arrays`) and
/// device copies.
pub(crate) fn workspace_names<'a>(
    arrays: &'a HashMap<String, Array>,
    gpu: Option<&Gpu>,
) -> Names<'a> {
    let mut names = host_names(arrays);
    if let Some(g) = gpu {
        for (n, d) in &g.resident {
            names
                .entry(n.clone())
                .or_insert(Arg {
                    host: None,
                    device: None,
                })
                .device = Some(d.clone());
        }
    }
    names
}

impl Session {
    /// Gives `name` a host copy if it has none (a readback, kept).
    pub(crate) fn materialize(&mut self, name: &str) -> Result<(), Error> {
        self.gather(name)?;
        self.force(name)?;
        self.assemble(name)?;
        if self.env.arrays.contains_key(name) {
            return Ok(());
        }
        let Some(g) = self.gpu.as_mut() else {
            return Ok(());
        };
        let Some(d) = g.resident.get(name).cloned() else {
            return Ok(());
        };
        let a = g.read(&d)?;
        // Every name sharing the array gets the copy.
        for n in sharing(&g.resident, &d) {
            self.env.arrays.entry(n).or_insert_with(|| a.clone());
        }
        Ok(())
    }

    /// Gives every workspace array a host copy (before the CPU reference runs).
    pub(crate) fn materialize_all(&mut self) -> Result<(), Error> {
        self.gather_all()?;
        self.force_all()?;
        let names: Vec<String> = self
            .gpu
            .as_ref()
            .map(|g| g.resident.keys().cloned().collect())
            .unwrap_or_default();
        for n in names {
            self.materialize(&n)?;
        }
        Ok(())
    }

    /// Drops the device copies of `names` (the reference may have changed them).
    pub(crate) fn forget_device(&mut self, names: &HashSet<String>) {
        self.deferred.retain(|n, _| !names.contains(n));
        self.nests.retain(|n, _| !names.contains(n));
        if let Some(g) = self.gpu.as_mut() {
            g.resident.retain(|n, _| !names.contains(n));
            g.collect();
        }
    }

    /// Sends arrays back to the host, least recently used first, until the resident
    /// bytes are within `budget`.
    pub(crate) fn evict_to(&mut self, budget: u64) -> Result<(), Error> {
        loop {
            let Some(g) = self.gpu.as_mut() else {
                return Ok(());
            };
            g.collect();
            if g.resident_bytes() <= budget {
                return Ok(());
            }
            if g.resident.is_empty() {
                // Then nested values held on the device go back to the host whole
                // (every name sharing one keeps the host copy).
                let Some(name) = self.nests.keys().min().cloned() else {
                    return Ok(());
                };
                if self.journal.is_open() {
                    self.settle()?;
                    continue;
                }
                self.assemble(&name)?;
                if let Some(n) = self.nests.get(&name).cloned() {
                    self.nests.retain(|_, m| !Rc::ptr_eq(m, &n));
                }
                if let Some(g) = self.gpu.as_mut() {
                    g.stats.evictions += 1;
                }
                continue;
            }
            // Launched statements are checked before anything is read back.
            if self.journal.is_open() {
                self.settle()?;
                continue;
            }
            let Some(victim) = g
                .resident
                .iter()
                .min_by_key(|(n, d)| (d.last_use.get(), (*n).clone()))
                .map(|(_, d)| d.clone())
            else {
                return Ok(());
            };
            let names: HashSet<String> = sharing(&g.resident, &victim).into_iter().collect();
            if let Some(n) = names.iter().next() {
                self.materialize(&n.clone())?;
            }
            if let Some(g) = self.gpu.as_mut() {
                g.stats.evictions += 1;
            }
            self.forget_device(&names);
        }
    }

    /// Sets (or, with `None`, removes) the host array `name`, dropping any device
    /// copy; returns the host array it replaced.
    pub(crate) fn set_host(&mut self, name: &str, a: Option<Array>) -> Option<Array> {
        self.forget_split(name);
        self.deferred.remove(name);
        self.nests.remove(name);
        if let Some(g) = self.gpu.as_mut() {
            g.resident.remove(name);
        }
        match a {
            Some(a) => self.env.arrays.insert(name.to_string(), a),
            None => self.env.arrays.remove(name),
        }
    }

    /// Workspace arrays (`is_workspace`) uploaded for a statement stay on the device.
    pub(crate) fn keep_uploads(&mut self, uploaded: Uploaded, is_workspace: impl Fn(&str) -> bool) {
        if let Some(g) = self.gpu.as_mut() {
            for (n, d) in uploaded {
                if is_workspace(&n) && !g.resident.contains_key(&n) {
                    g.resident.insert(n, d);
                }
            }
        }
    }

    /// Whether some workspace array is only on the device.
    pub(crate) fn has_device_only(&self) -> bool {
        self.gpu
            .as_ref()
            .is_some_and(|g| g.resident.keys().any(|n| !self.env.arrays.contains_key(n)))
    }

    /// Binds `name` to a value the device path computed.
    pub(crate) fn bind_val(&mut self, name: &str, v: Val) {
        if self.env.functions.remove(name).is_some() {
            self.functions_changed();
        }
        self.forget_split(name);
        self.deferred.remove(name);
        self.nests.remove(name);
        match v.host {
            Some(a) => self.env.arrays.insert(name.to_string(), a),
            None => self.env.arrays.remove(name),
        };
        if let Some(g) = self.gpu.as_mut() {
            match v.device {
                Some(d) => g.resident.insert(name.to_string(), d),
                None => g.resident.remove(name),
            };
        }
    }

    /// The host value of `v` (read back once if it is only on the device).
    pub(crate) fn host_of(&mut self, v: Val) -> Result<Array, Error> {
        match (v.host, v.device) {
            (Some(a), _) => Ok(a),
            (None, Some(d)) => match self.gpu.as_mut() {
                Some(g) => g.read(&d),
                None => Err(arrc_ir::error::err::unsupported("no Vulkan device", 0..0)),
            },
            (None, None) => Err(arrc_ir::error::err::unsupported("no value", 0..0)),
        }
    }
}

/// The workspace as a session's commands see it (`)vars )fns )erase )clear`).
impl Session {
    /// The names of the workspace's arrays, sorted: on the host, on the device, kept
    /// as recipes or split across devices.
    pub fn variables(&self) -> Vec<String> {
        let mut names: std::collections::BTreeSet<String> =
            self.env.arrays.keys().cloned().collect();
        if let Some(g) = &self.gpu {
            names.extend(g.resident.keys().cloned());
        }
        names.extend(self.deferred.keys().cloned());
        names.extend(self.nests.keys().cloned());
        if let Some(m) = &self.multi {
            names.extend(m.arrays.keys().cloned());
        }
        // Hidden names (snapshots of recipes, `#d…`) are not the user's.
        names.into_iter().filter(|n| !n.starts_with('#')).collect()
    }

    /// The workspace's functions and operators, by name (sorted).
    pub(crate) fn functions(&self) -> Vec<(String, arrc_syntax::Func)> {
        let mut fs: Vec<_> = self
            .env
            .functions
            .iter()
            .map(|(n, f)| (n.clone(), f.clone()))
            .collect();
        fs.sort_by(|a, b| a.0.cmp(&b.0));
        fs
    }

    /// The names of the workspace's functions and operators, sorted.
    pub fn function_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.env.functions.keys().cloned().collect();
        names.sort();
        names
    }

    /// Removes `name` (an array, function or operator) from the workspace; whether
    /// it was there.
    pub fn erase(&mut self, name: &str) -> bool {
        let was =
            self.variables().iter().any(|n| n == name) || self.env.functions.contains_key(name);
        if self.env.functions.remove(name).is_some() {
            self.functions_changed();
        }
        self.set_host(name, None);
        was
    }

    /// Empties the workspace (every name erased) and sets ⎕IO, ⎕PP, ⎕PW, ⎕CT and
    /// ⎕RL back to a clear workspace's; the float type, the input source and `]box`
    /// stay the session's.
    pub fn clear(&mut self) {
        let names: Vec<String> = self
            .variables()
            .into_iter()
            .chain(self.function_names())
            .collect();
        for n in names {
            self.erase(&n);
        }
        // The session's own settings stay: its float type, where input comes from,
        // framing, and output not yet shown.
        let old = std::mem::take(&mut self.env);
        self.env = arrc_ref::Env {
            float: old.float,
            input: old.input,
            boxing: old.boxing,
            output: old.output,
            pending: old.pending,
            ..Default::default()
        };
        arrc_ir::scalar::set_comparison_tolerance(self.env.ct);
        arrc_ir::random::set_device_rng(Some(self.env.rng));
    }
}
