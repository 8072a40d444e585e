//! Compute pipelines: made once per module, entry point and specialization
//! constants, found again by their module's key, evicted least recently used.

use super::*;
use std::ffi::CString;

/// Module hash, entry point, specialization constants.
/// A pipeline's module key, bindings, push constants, entry point and specialization
/// constants, hashed: found without allocating on every run of every kernel.
pub(super) type PipelineKey = u64;

/// A compiled compute pipeline, by index into the context's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PipelineId(usize);

/// Pipelines kept at most: past this, the least recently used of those no statement
/// in flight uses are destroyed (each is about half a megabyte on lavapipe, and a
/// long session of distinct statements made them without end).
pub const MAX_PIPELINES: usize = 256;

pub(super) struct Pipeline {
    pub(super) key: PipelineKey,
    /// The epoch ([`Context::begin_epoch`]) that last used it.
    pub(super) last_used: u64,
    /// Its number among all the pipelines this context made.
    pub(super) made: usize,
    pub(super) pipeline: vk::Pipeline,
    pub(super) layout: vk::PipelineLayout,
    pub(super) set_layout: vk::DescriptorSetLayout,
    pub(super) bindings: u32,
    pub(super) push_words: u32,
    /// What the driver reported about it, when asked to capture that.
    pub(super) report: Option<PipelineReport>,
}

/// What the driver compiled for one pipeline (`Context::capture_statistics`).
#[derive(Clone, Debug)]
pub struct PipelineReport {
    pub entry: String,
    /// (specialization constant id, value)
    pub spec: Vec<(u32, u32)>,
    /// The driver's statistics, (name, value): on NVIDIA the register count among them.
    pub statistics: Vec<(String, String)>,
}

/// The key of a SPIR-V module for [`Context::pipeline`]: a hash of its words,
/// computed once where the module is made (hashing a module of tens of kilobytes at
/// every statement's run cost 7 µs a kernel on the H100's host).
pub fn module_key(words: &[u32]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    words.hash(&mut h);
    h.finish()
}

impl Context {
    /// A compute pipeline for entry point `entry` of `words`, with `bindings` storage
    /// buffers at set 0, `push_words` u32 push constants and specialization constants
    /// `spec` (id, value). Pipelines are cached by module, entry and constants.
    pub fn pipeline(
        &mut self,
        words: &[u32],
        module: u64,
        entry: &str,
        bindings: u32,
        push_words: u32,
        spec: &[(u32, u32)],
    ) -> Result<PipelineId> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (module, bindings, push_words, entry, spec).hash(&mut h);
        let key = h.finish();
        if let Some(&id) = self.by_key.get(&key) {
            if let Some(p) = self.pipelines[id.0].as_mut() {
                p.last_used = self.epoch;
            }
            return Ok(id);
        }
        self.evict_pipelines();
        let d = &self.device;
        let module = unsafe {
            d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(words), None)
        }
        .what("vkCreateShaderModule")?;
        let lb: Vec<_> = (0..bindings)
            .map(|i| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(i)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let set_layout = unsafe {
            d.create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&lb),
                None,
            )
        }
        .what("vkCreateDescriptorSetLayout")?;
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .size(4 * push_words.max(1))];
        let sls = [set_layout];
        let mut lci = vk::PipelineLayoutCreateInfo::default().set_layouts(&sls);
        if push_words > 0 {
            lci = lci.push_constant_ranges(&ranges);
        }
        let layout =
            unsafe { d.create_pipeline_layout(&lci, None) }.what("vkCreatePipelineLayout")?;
        let entries: Vec<_> = spec
            .iter()
            .enumerate()
            .map(|(i, (id, _))| {
                vk::SpecializationMapEntry::default()
                    .constant_id(*id)
                    .offset(4 * i as u32)
                    .size(4)
            })
            .collect();
        let data: Vec<u8> = spec.iter().flat_map(|(_, v)| v.to_le_bytes()).collect();
        let si = vk::SpecializationInfo::default()
            .map_entries(&entries)
            .data(&data);
        let name = CString::new(entry).map_err(|_| VkError::Limit("entry point name".into()))?;
        let mut stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(&name)
            .specialization_info(&si);
        if self.info.full_subgroups {
            stage = stage.flags(vk::PipelineShaderStageCreateFlags::REQUIRE_FULL_SUBGROUPS);
        }
        let capture = self.capture_statistics && self.executables.is_some();
        let flags = if capture {
            vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR
        } else {
            vk::PipelineCreateFlags::empty()
        };
        let ci = [vk::ComputePipelineCreateInfo::default()
            .flags(flags)
            .stage(stage)
            .layout(layout)];
        let r = unsafe { d.create_compute_pipelines(self.cache, &ci, None) };
        unsafe { d.destroy_shader_module(module, None) };
        let pipeline = match r {
            Ok(p) => p[0],
            // NVIDIA's compiler has failed on valid modules ("NVVM compilation
            // failed", fuzz seed 109 index 892): nothing ran, the reference can.
            Err((_, vk::Result::ERROR_UNKNOWN)) => {
                return Err(VkError::Compiler(format!(
                    "vkCreateComputePipelines of {entry}: {}",
                    vk::Result::ERROR_UNKNOWN
                )))
            }
            Err((_, e)) => return Err(e).what("vkCreateComputePipelines"),
        };
        let report = match &self.executables {
            Some(x) if capture => Some(PipelineReport {
                entry: entry.to_string(),
                spec: spec.to_vec(),
                statistics: executable_statistics(x, pipeline),
            }),
            _ => None,
        };
        let made = self.made;
        self.made += 1;
        let p = Pipeline {
            key,
            last_used: self.epoch,
            made,
            pipeline,
            layout,
            set_layout,
            bindings,
            push_words,
            report,
        };
        let id = match self.free_slots.pop() {
            Some(slot) => {
                self.pipelines[slot] = Some(p);
                PipelineId(slot)
            }
            None => {
                self.pipelines.push(Some(p));
                PipelineId(self.pipelines.len() - 1)
            }
        };
        self.by_key.insert(key, id);
        Ok(id)
    }

    /// Starts a new epoch: pipelines used only in earlier ones may be evicted. The
    /// session calls it before each statement, whose pipelines then stay until it is
    /// done (a recording holds pipeline ids).
    pub fn begin_epoch(&mut self) {
        self.epoch += 1;
    }

    /// Whether a submission outlasted the runtime's wait ([`crate::VkError::Timeout`]):
    /// the device may still be running it, and this context submits nothing more.
    pub fn stalled(&self) -> bool {
        self.stalled.get()
    }

    /// Pipelines alive now.
    pub fn pipelines_cached(&self) -> usize {
        self.pipelines.len() - self.free_slots.len()
    }

    /// Past [`MAX_PIPELINES`], destroys the least recently used pipelines of earlier
    /// epochs, down to three quarters of it.
    pub(super) fn evict_pipelines(&mut self) {
        if self.pipelines_cached() < MAX_PIPELINES {
            return;
        }
        let mut old: Vec<(u64, usize)> = self
            .pipelines
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.as_ref().map(|p| (p.last_used, i)))
            .filter(|&(used, _)| used < self.epoch)
            .collect();
        old.sort_unstable();
        let excess = self.pipelines_cached() + 1 - MAX_PIPELINES * 3 / 4;
        for &(_, slot) in old.iter().take(excess) {
            if let Some(p) = self.pipelines[slot].take() {
                self.by_key.remove(&p.key);
                // SAFETY: every submission was waited on, and no recording of this
                // epoch uses it.
                unsafe {
                    self.device.destroy_pipeline(p.pipeline, None);
                    self.device.destroy_pipeline_layout(p.layout, None);
                    self.device
                        .destroy_descriptor_set_layout(p.set_layout, None);
                }
                self.free_slots.push(slot);
            }
        }
        // The driver's pipeline cache keeps what every pipeline compiled, evicted or
        // not (on lavapipe it grew by about half a megabyte a statement): start an
        // empty one. The pipelines alive do not need it any more.
        // SAFETY: no pipeline creation is in progress; the new cache replaces it.
        unsafe {
            if let Ok(fresh) = self
                .device
                .create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None)
            {
                self.device.destroy_pipeline_cache(self.cache, None);
                self.cache = fresh;
            }
        }
    }

    pub(super) fn pipeline_at(&self, id: PipelineId) -> &Pipeline {
        self.pipelines[id.0]
            .as_ref()
            .expect("a recording's pipelines live through its epoch")
    }

    /// The pipelines made so far with their captured statistics, from the `from`th on.
    pub fn pipeline_reports(&self, from: usize) -> Vec<PipelineReport> {
        let mut live: Vec<&Pipeline> = self
            .pipelines
            .iter()
            .flatten()
            .filter(|p| p.made >= from)
            .collect();
        live.sort_by_key(|p| p.made);
        live.into_iter().filter_map(|p| p.report.clone()).collect()
    }

    /// How many pipelines this context has made.
    pub fn pipeline_count(&self) -> usize {
        self.made
    }
}

/// The driver's statistics of every executable of `pipeline`, as (name, value) text.
pub(super) fn executable_statistics(
    x: &ash::khr::pipeline_executable_properties::Device,
    pipeline: vk::Pipeline,
) -> Vec<(String, String)> {
    let info = vk::PipelineInfoKHR::default().pipeline(pipeline);
    // SAFETY: the pipeline was just created with CAPTURE_STATISTICS on this device.
    let count = unsafe { x.get_pipeline_executable_properties(&info) }
        .map(|v| v.len())
        .unwrap_or(0);
    let mut out = vec![];
    for i in 0..count as u32 {
        let ei = vk::PipelineExecutableInfoKHR::default()
            .pipeline(pipeline)
            .executable_index(i);
        // SAFETY: as above; the index is below the count the driver gave.
        let Ok(stats) = (unsafe { x.get_pipeline_executable_statistics(&ei) }) else {
            continue;
        };
        for st in stats {
            let name = st
                .name_as_c_str()
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_default();
            // SAFETY: the format field says which member of the union is set.
            let value = unsafe {
                match st.format {
                    vk::PipelineExecutableStatisticFormatKHR::BOOL32 => {
                        (st.value.b32 != 0).to_string()
                    }
                    vk::PipelineExecutableStatisticFormatKHR::INT64 => st.value.i64.to_string(),
                    vk::PipelineExecutableStatisticFormatKHR::UINT64 => st.value.u64.to_string(),
                    vk::PipelineExecutableStatisticFormatKHR::FLOAT64 => st.value.f64.to_string(),
                    _ => "?".into(),
                }
            };
            out.push((name, value));
        }
    }
    out
}
