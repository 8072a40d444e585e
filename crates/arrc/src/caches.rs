//! The caches of compiled statements (by their text, the arrays they read and the
//! options) and of kernels' SPIR-V modules (by everything that shapes a module),
//! each a least-recently-used map of bounded size.

use crate::gpu::CompiledStatement;
use arrc_syntax::Expr;
use std::collections::HashMap;
use std::rc::Rc;

/// A map of at most `limit` entries by string key: when full, the least recently
/// used quarter goes. Behind a `RefCell`, so that `&self` compilation can fill it.
pub struct Lru<V> {
    map: std::cell::RefCell<HashMap<String, (u64, V)>>,
    tick: std::cell::Cell<u64>,
    limit: usize,
}

impl<V: Clone> Lru<V> {
    fn new(limit: usize) -> Lru<V> {
        Lru {
            map: Default::default(),
            tick: Default::default(),
            limit,
        }
    }

    /// How many entries it holds.
    pub fn len(&self) -> usize {
        self.map.borrow().len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn now(&self) -> u64 {
        self.tick.set(self.tick.get() + 1);
        self.tick.get()
    }

    fn get(&self, key: &str) -> Option<V> {
        let now = self.now();
        self.map.borrow_mut().get_mut(key).map(|(t, v)| {
            *t = now;
            v.clone()
        })
    }

    fn put(&self, key: String, v: V) {
        let now = self.now();
        let mut m = self.map.borrow_mut();
        if m.len() >= self.limit {
            let mut by_age: Vec<(u64, String)> =
                m.iter().map(|(k, (t, _))| (*t, k.clone())).collect();
            by_age.sort_unstable();
            for (_, k) in by_age.into_iter().take(self.limit.div_ceil(4)) {
                m.remove(&k);
            }
        }
        m.insert(key, (now, v));
    }
}

/// Statements compiled, by everything their compilation read (see
/// `Session::compile_with`), at most [`MAX_COMPILED`]: a statement run again (a
/// loop, `arrc bench`, the same REPL line) skips lowering, planning and the module
/// lookups.
pub struct CompiledCache(Lru<(Expr, Rc<CompiledStatement>)>);

/// Compiled statements kept at most by a session's [`CompiledCache`].
pub const MAX_COMPILED: usize = 512;

impl Default for CompiledCache {
    fn default() -> Self {
        CompiledCache(Lru::new(MAX_COMPILED))
    }
}

impl CompiledCache {
    /// How many entries it holds.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The statement compiled from `e` under `key` (which holds `e`'s hash: `e`
    /// itself must match too).
    pub(crate) fn get(&self, key: &str, e: &Expr) -> Option<Rc<CompiledStatement>> {
        self.0.get(key).filter(|(x, _)| x == e).map(|(_, c)| c)
    }

    pub(crate) fn put(&self, key: String, e: &Expr, c: Rc<CompiledStatement>) {
        self.0.put(key, (e.clone(), c))
    }
}

/// SPIR-V modules already emitted and validated, by kernel (its kind, bindings, push
/// constants and specialization defaults; not its name), at most [`MAX_MODULES`]: the
/// least recently used go first.
/// Validated SPIR-V modules by kernel: the session's, and on disk between processes
/// (`modules-EMITTER_HASH/` in `arrc_vk::disk_cache::cache_dir`, the hash of the
/// emitter's sources, so no build reads another's modules; one checksummed file
/// per kernel holding its key and words, so a damaged or colliding file is ignored
/// and the module emitted and validated again).
pub struct ModuleCache {
    lru: Lru<Vec<u32>>,
    dir: Option<std::path::PathBuf>,
    /// Modules read from disk instead of emitted and validated.
    pub(crate) from_disk: std::cell::Cell<u64>,
}

/// Modules kept at most by a session's [`ModuleCache`].
pub const MAX_MODULES: usize = 1024;

impl Default for ModuleCache {
    fn default() -> Self {
        ModuleCache {
            lru: Lru::new(MAX_MODULES),
            dir: arrc_vk::disk_cache::cache_dir()
                .map(|d| d.join(format!("modules-{}", arrc_spirv::EMITTER_HASH))),
            from_disk: Default::default(),
        }
    }
}

impl ModuleCache {
    /// How many modules it holds.
    pub fn len(&self) -> usize {
        self.lru.len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.lru.is_empty()
    }

    fn file(&self, key: &str) -> Option<std::path::PathBuf> {
        let hash = arrc_vk::disk_cache::fnv1a(key.as_bytes());
        Some(self.dir.as_ref()?.join(format!("{hash:016x}.spv")))
    }

    /// The module stored on disk for `key`: its words where the file holds this
    /// very key.
    fn load(&self, key: &str) -> Option<Vec<u32>> {
        let data = arrc_vk::disk_cache::load_checked(&self.file(key)?)?;
        let len = u64::from_le_bytes(data.get(..8)?.try_into().ok()?) as usize;
        let stored = data.get(8..8usize.checked_add(len)?)?;
        let words = data.get(8 + len..)?;
        if stored != key.as_bytes() || words.is_empty() || words.len() % 4 != 0 {
            return None;
        }
        Some(
            words
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        )
    }

    fn save(&self, key: &str, words: &[u32]) {
        let Some(path) = self.file(key) else {
            return;
        };
        let mut data = Vec::with_capacity(8 + key.len() + 4 * words.len());
        data.extend_from_slice(&(key.len() as u64).to_le_bytes());
        data.extend_from_slice(key.as_bytes());
        data.extend(words.iter().flat_map(|w| w.to_le_bytes()));
        arrc_vk::disk_cache::save(&path, &data);
    }

    pub(crate) fn get(
        &self,
        k: &arrc_ir::plan::Kernel,
    ) -> Result<Vec<u32>, arrc_spirv::SpirvError> {
        let key = module_cache_key(k);
        if let Some(words) = self.lru.get(&key) {
            return Ok(words);
        }
        if let Some(words) = self.load(&key) {
            self.from_disk.set(self.from_disk.get() + 1);
            self.lru.put(key, words.clone());
            return Ok(words);
        }
        let words = arrc_spirv::emit_validated(&[(k, "main")])?;
        self.save(&key, &words);
        self.lru.put(key, words.clone());
        Ok(words)
    }
}

/// What decides the module emitted for kernel `k`: everything of it but its name
/// (the entry point is `main`). A field left out here lets two kernels share a
/// module: a kernel guarded to run where a word is 0 once took the module of one
/// guarded on another word, and neither way of an integer `+.×` ran.
pub(crate) fn module_cache_key(k: &arrc_ir::plan::Kernel) -> String {
    let arrc_ir::plan::Kernel {
        name: _,
        kind,
        bindings,
        push_constants,
        workgroup_size,
        items_per_thread,
        spin_limit,
        n_from,
        combine,
        window_bytes,
        float64,
        denorm_preserve_f64,
        denorm_preserve_f32,
        flush_f32,
        maximal_reconvergence,
        ct,
        trip_guards,
        lookback_budget,
        guard,
    } = k;
    format!(
        "{kind:?}|{n_from:?}|{combine:?}|{window_bytes:?}|{bindings:?}|{push_constants:?}|{workgroup_size}|{items_per_thread}|{spin_limit}|{float64}|{denorm_preserve_f64}|{denorm_preserve_f32}|{flush_f32}|{maximal_reconvergence}|{ct:e}|{trip_guards:?}|{lookback_budget:?}|{guard:?}"
    )
}
