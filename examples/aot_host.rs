//! A Vulkan host for `arrc build`'s output that knows nothing of arrc: it reads the
//! `.spv` module and its JSON manifest (docs/MANIFEST.md) and runs the program with
//! ash alone. For a monadic function of one numeric vector:
//!
//! ```sh
//! arrc build examples/sumsq.apl -o /tmp/sumsq.spv
//! cargo run -p arrc --example aot_host -- /tmp/sumsq.spv 1 2 3 4    # 30
//! ```
//!
//! What it does is what the manifest asks of any host: check the requirements,
//! enable the features, make one pipeline per entry point with its specialization
//! constants, size every buffer from the counts, upload the arguments and constants,
//! zero the status and zeroed buffers, record the dispatches in order with barriers
//! (indirect and repeated ones too), then read the status word, the device-computed
//! lengths and the result. The test `aot_host_runs_a_module_from_its_manifest_alone`
//! runs it.

use ash::vk;
use serde_json::Value;
use std::collections::HashMap;
use std::ffi::CString;
use std::path::Path;

type Res<T> = Result<T, String>;

fn vkr(what: &str) -> impl Fn(vk::Result) -> String + '_ {
    move |e| format!("{what}: {e}")
}

/// Bytes per element of a manifest type in a buffer (booleans and characters are u32).
fn width(elem: &str) -> u64 {
    match elem {
        "i64" | "f64" => 8,
        _ => 4,
    }
}

/// A dimension: a number, `n<i>` (a length symbol) or `d<i>` (a device length).
fn dim(v: &Value, lens: &HashMap<String, u64>) -> Res<u64> {
    match v {
        Value::Number(n) => n.as_u64().ok_or("bad dimension".into()),
        Value::String(s) => lens.get(s).copied().ok_or(format!("unknown length {s}")),
        _ => Err(format!("bad dimension {v}")),
    }
}

/// A count of the manifest (`product`, `groups`, `scaled`, `times`, `sum`).
fn count(c: &Value, lens: &HashMap<String, u64>) -> Res<u64> {
    let o = c.as_object().ok_or(format!("bad count {c}"))?;
    let (k, v) = o.iter().next().ok_or("empty count")?;
    Ok(match k.as_str() {
        "product" => v
            .as_array()
            .ok_or("bad product")?
            .iter()
            .map(|d| dim(d, lens))
            .product::<Res<u64>>()?,
        "groups" => {
            let of = count(&v["of"], lens)?;
            let per = v["per_group"].as_u64().ok_or("per_group")?.max(1);
            let max = v["max"].as_u64().ok_or("max")?;
            of.div_ceil(per).min(max).max(1)
        }
        "scaled" => count(&v["of"], lens)? * v["times"].as_u64().ok_or("times")?,
        "times" => v
            .as_array()
            .ok_or("bad times")?
            .iter()
            .map(|c| count(c, lens))
            .product::<Res<u64>>()?,
        "sum" => v
            .as_array()
            .ok_or("bad sum")?
            .iter()
            .map(|c| count(c, lens))
            .sum::<Res<u64>>()?,
        other => return Err(format!("unknown count {other}")),
    })
}

/// The bytes of `values` as elements of `elem`.
fn encode(elem: &str, values: &[f64]) -> Res<Vec<u8>> {
    Ok(match elem {
        "f32" => values
            .iter()
            .flat_map(|v| (*v as f32).to_le_bytes())
            .collect(),
        "f64" => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        "i32" | "bool" => values
            .iter()
            .flat_map(|v| (*v as i32).to_le_bytes())
            .collect(),
        "i64" => values
            .iter()
            .flat_map(|v| (*v as i64).to_le_bytes())
            .collect(),
        other => return Err(format!("arguments of type {other} are not read here")),
    })
}

fn decode(elem: &str, bytes: &[u8]) -> Vec<f64> {
    let w = width(elem) as usize;
    bytes
        .chunks_exact(w)
        .map(|c| match elem {
            "f32" => f32::from_le_bytes(c.try_into().unwrap()) as f64,
            "f64" => f64::from_le_bytes(c.try_into().unwrap()),
            "i64" => i64::from_le_bytes(c.try_into().unwrap()) as f64,
            _ => i32::from_le_bytes(c.try_into().unwrap()) as f64,
        })
        .collect()
}

/// A constant buffer's literal array (`{"shape","type","data"}`) as bytes.
fn literal(a: &Value) -> Res<Vec<u8>> {
    let elem = a["type"].as_str().ok_or("a literal's type")?;
    let data: Vec<f64> = a["data"]
        .as_array()
        .ok_or("a literal's data")?
        .iter()
        .map(|x| x.as_f64().ok_or("a literal number".to_string()))
        .collect::<Res<_>>()?;
    encode(elem, &data)
}

/// What a run gives back: the result's shape and elements (as f64), or the device
/// errors it raised.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    Value { shape: Vec<u64>, data: Vec<f64> },
    Errors(Vec<String>),
}

/// Runs the module at `spv` (its manifest beside it, `.json`) on ⍵ = `omega`, a
/// numeric vector, on the first Vulkan device.
pub fn run(spv: &Path, omega: &[f64]) -> Res<Outcome> {
    let words: Vec<u32> = std::fs::read(spv)
        .map_err(|e| format!("{}: {e}", spv.display()))?
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let mpath = spv.with_extension("json");
    let m: Value = serde_json::from_str(
        &std::fs::read_to_string(&mpath).map_err(|e| format!("{}: {e}", mpath.display()))?,
    )
    .map_err(|e| e.to_string())?;
    if m["format"] != "arrc-manifest/1" {
        return Err("not an arrc-manifest/1".into());
    }
    // The run-time lengths: each length symbol is an axis of a parameter.
    let params = m["params"].as_array().ok_or("params")?;
    if params.len() != 1 || params[0]["shape"].as_array().map(Vec::len) != Some(1) {
        return Err("this host runs monadic functions of a vector".into());
    }
    let mut lens: HashMap<String, u64> = HashMap::new();
    for s in m["length_symbols"].as_array().ok_or("length_symbols")? {
        lens.insert(format!("n{}", s["symbol"]), omega.len() as u64);
    }
    for d in m["device_lengths"].as_array().ok_or("device_lengths")? {
        let bound = dim(&d["at_most"], &lens)?;
        lens.insert(d["length"].as_str().unwrap_or("").to_string(), bound);
    }
    unsafe { execute(&m, &words, omega, lens) }
}

unsafe fn execute(
    m: &Value,
    words: &[u32],
    omega: &[f64],
    mut lens: HashMap<String, u64>,
) -> Res<Outcome> {
    let entry = ash::Entry::load().map_err(|e| format!("no Vulkan loader: {e}"))?;
    // The highest version this host uses (1.3's structures where the device has them).
    let app = vk::ApplicationInfo::default().api_version(vk::make_api_version(0, 1, 3, 0));
    let instance = entry
        .create_instance(
            &vk::InstanceCreateInfo::default().application_info(&app),
            None,
        )
        .map_err(vkr("vkCreateInstance"))?;
    let pd = *instance
        .enumerate_physical_devices()
        .map_err(vkr("vkEnumeratePhysicalDevices"))?
        .first()
        .ok_or("no Vulkan device")?;
    let qf = instance
        .get_physical_device_queue_family_properties(pd)
        .iter()
        .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
        .ok_or("no compute queue")? as u32;
    // The requirements: subgroup operations, then the features to enable.
    let mut sub = vk::PhysicalDeviceSubgroupProperties::default();
    let api = {
        let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut sub);
        instance.get_physical_device_properties2(pd, &mut props);
        props.properties.api_version
    };
    for op in m["requires"]["subgroup_operations"]
        .as_array()
        .ok_or("requires")?
    {
        let bit = match op.as_str().unwrap_or("") {
            "BASIC" => vk::SubgroupFeatureFlags::BASIC,
            "VOTE" => vk::SubgroupFeatureFlags::VOTE,
            "ARITHMETIC" => vk::SubgroupFeatureFlags::ARITHMETIC,
            "BALLOT" => vk::SubgroupFeatureFlags::BALLOT,
            "SHUFFLE" => vk::SubgroupFeatureFlags::SHUFFLE,
            "SHUFFLE_RELATIVE" => vk::SubgroupFeatureFlags::SHUFFLE_RELATIVE,
            "CLUSTERED" => vk::SubgroupFeatureFlags::CLUSTERED,
            "QUAD" => vk::SubgroupFeatureFlags::QUAD,
            other => return Err(format!("unknown subgroup operation {other}")),
        };
        if !sub.supported_operations.contains(bit) {
            return Err(format!("the device lacks subgroup operation {op}"));
        }
    }
    // A module planned for a named device (`--target nvidia`) may rely on what
    // that device does (64-bit status words read whole, a barrier that orders a
    // spinning subgroup's stores); on a device with other subgroups it is refused
    // rather than risk a wrong answer. `generic` modules run anywhere.
    let target = &m["target"];
    if let (Some(name), Some(want)) = (target["name"].as_str(), target["subgroup_size"].as_u64()) {
        if name != "generic" && want != u64::from(sub.subgroup_size) {
            return Err(format!(
                "the module was built for subgroups of {want} (--target {name}); this device's are {}: build it with --target device or generic",
                sub.subgroup_size
            ));
        }
    }
    // Structures of Vulkan 1.2 and 1.3 only where the device has those versions.
    let minor = vk::api_version_minor(api);
    let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut f13 = vk::PhysicalDeviceVulkan13Features::default();
    let mut p13 = vk::PhysicalDeviceVulkan13Properties::default();
    if minor >= 3 {
        let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut p13);
        instance.get_physical_device_properties2(pd, &mut props);
    }
    let hf = {
        let mut have = vk::PhysicalDeviceFeatures2::default();
        if minor >= 2 {
            have = have.push_next(&mut f12);
        }
        if minor >= 3 {
            have = have.push_next(&mut f13);
        }
        instance.get_physical_device_features2(pd, &mut have);
        have.features
    };
    let mut core = vk::PhysicalDeviceFeatures::default();
    let mut e12 = vk::PhysicalDeviceVulkan12Features::default();
    for f in m["requires"]["features"].as_array().ok_or("features")? {
        match f.as_str().unwrap_or("") {
            "shaderFloat64" => core.shader_float64 = hf.shader_float64,
            "shaderInt64" => core.shader_int64 = hf.shader_int64,
            "shaderInt16" => core.shader_int16 = hf.shader_int16,
            "shaderBufferInt64Atomics" => {
                e12.shader_buffer_int64_atomics = f12.shader_buffer_int64_atomics
            }
            "vulkanMemoryModel" => e12.vulkan_memory_model = f12.vulkan_memory_model,
            "shaderInt8" => e12.shader_int8 = f12.shader_int8,
            "shaderSubgroupExtendedTypes" => {
                e12.shader_subgroup_extended_types = f12.shader_subgroup_extended_types
            }
            other => return Err(format!("this host does not enable {other}")),
        }
    }
    for (want, got) in [
        ("shaderFloat64", core.shader_float64),
        ("shaderInt64", core.shader_int64),
        ("shaderInt16", core.shader_int16),
        ("shaderInt8", e12.shader_int8),
        ("shaderBufferInt64Atomics", e12.shader_buffer_int64_atomics),
        ("vulkanMemoryModel", e12.vulkan_memory_model),
        (
            "shaderSubgroupExtendedTypes",
            e12.shader_subgroup_extended_types,
        ),
    ] {
        let asked = m["requires"]["features"]
            .as_array()
            .is_some_and(|a| a.iter().any(|f| f == want));
        if asked && got == vk::FALSE {
            return Err(format!("the device lacks {want}"));
        }
    }
    // Full subgroups where the device can give them (the manifest's note).
    let full = f13.compute_full_subgroups == vk::TRUE && f13.subgroup_size_control == vk::TRUE;
    let max_subgroup = p13.max_subgroup_size.max(1);
    let mut e13 = vk::PhysicalDeviceVulkan13Features::default()
        .subgroup_size_control(full)
        .compute_full_subgroups(full);
    let prio = [1.0f32];
    let qci = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(qf)
        .queue_priorities(&prio)];
    let mut dci = vk::DeviceCreateInfo::default()
        .queue_create_infos(&qci)
        .enabled_features(&core);
    if minor >= 2 {
        dci = dci.push_next(&mut e12);
    }
    if minor >= 3 {
        dci = dci.push_next(&mut e13);
    }
    let dev = instance
        .create_device(pd, &dci, None)
        .map_err(vkr("vkCreateDevice"))?;
    let queue = dev.get_device_queue(qf, 0);
    let mem = instance.get_physical_device_memory_properties(pd);
    let host = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;

    // Buffers, host-visible (a real host would stage large ones).
    let bufs = m["buffers"].as_array().ok_or("buffers")?;
    let mut made = vec![];
    for b in bufs {
        let elem = b["elem"].as_str().ok_or("elem")?;
        let bytes = (count(&b["len"], &lens)? * width(elem)).max(16);
        let buf = dev
            .create_buffer(
                &vk::BufferCreateInfo::default().size(bytes).usage(
                    vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::INDIRECT_BUFFER,
                ),
                None,
            )
            .map_err(vkr("vkCreateBuffer"))?;
        let req = dev.get_buffer_memory_requirements(buf);
        let ty = (0..mem.memory_type_count)
            .find(|&i| {
                req.memory_type_bits & (1 << i) != 0
                    && mem.memory_types[i as usize].property_flags.contains(host)
            })
            .ok_or("no host-visible memory")?;
        let memory = dev
            .allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(ty),
                None,
            )
            .map_err(vkr("vkAllocateMemory"))?;
        dev.bind_buffer_memory(buf, memory, 0)
            .map_err(vkr("vkBindBufferMemory"))?;
        let ptr = dev
            .map_memory(memory, 0, bytes, vk::MemoryMapFlags::empty())
            .map_err(vkr("vkMapMemory"))? as *mut u8;
        std::ptr::write_bytes(ptr, 0, bytes as usize);
        let init = match &b["role"] {
            Value::Object(o) if o.contains_key("param") => Some(encode(elem, omega)?),
            Value::Object(o) if o.contains_key("const") => Some(literal(&o["const"])?),
            Value::String(s) if s == "rng" => {
                return Err("programs that draw random numbers are not run here".into())
            }
            _ => None,
        };
        if let Some(init) = init {
            std::ptr::copy_nonoverlapping(init.as_ptr(), ptr, init.len().min(bytes as usize));
        }
        made.push((buf, memory, ptr, bytes));
    }

    // One pipeline per entry point, with its specialization constants.
    let module = dev
        .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(words), None)
        .map_err(vkr("vkCreateShaderModule"))?;
    let mut pipes = vec![];
    for k in m["entry_points"].as_array().ok_or("entry_points")? {
        let nb = k["bindings"].as_array().ok_or("bindings")?;
        if nb.iter().any(|b| b["windows"].as_u64().unwrap_or(1) > 1) {
            return Err("bindings split in windows are not run here".into());
        }
        let lb: Vec<_> = (0..nb.len() as u32)
            .map(|i| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(i)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let sl = dev
            .create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&lb),
                None,
            )
            .map_err(vkr("vkCreateDescriptorSetLayout"))?;
        let npush = k["push_constants"].as_array().map_or(0, Vec::len) as u32;
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .size(4 * npush.max(1))];
        let sls = [sl];
        let layout = dev
            .create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default()
                    .set_layouts(&sls)
                    .push_constant_ranges(&ranges),
                None,
            )
            .map_err(vkr("vkCreatePipelineLayout"))?;
        let spec: Vec<u32> = ["workgroup_size", "items_per_thread", "spin_limit"]
            .iter()
            .map(|f| k[*f].as_u64().unwrap_or(1) as u32)
            .collect();
        let entries: Vec<_> = (0..3)
            .map(|i| {
                vk::SpecializationMapEntry::default()
                    .constant_id(i)
                    .offset(4 * i)
                    .size(4)
            })
            .collect();
        let data: Vec<u8> = spec.iter().flat_map(|v| v.to_le_bytes()).collect();
        let si = vk::SpecializationInfo::default()
            .map_entries(&entries)
            .data(&data);
        let name = CString::new(k["name"].as_str().ok_or("name")?).map_err(|e| e.to_string())?;
        let mut stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(&name)
            .specialization_info(&si);
        // Full subgroups where the device can give them and the workgroup holds
        // whole ones of its largest size.
        if full && minor >= 3 && spec[0].checked_rem(max_subgroup) == Some(0) {
            stage = stage.flags(vk::PipelineShaderStageCreateFlags::REQUIRE_FULL_SUBGROUPS);
        }
        let ci = [vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(layout)];
        let p = dev
            .create_compute_pipelines(vk::PipelineCache::null(), &ci, None)
            .map_err(|(_, e)| format!("vkCreateComputePipelines: {e}"))?[0];
        pipes.push((p, layout, sl, nb.len()));
    }

    // Descriptor sets, one per dispatch.
    let ds = m["dispatches"].as_array().ok_or("dispatches")?;
    let total: u32 = ds
        .iter()
        .map(|d| d["buffers"].as_array().map_or(0, Vec::len) as u32)
        .sum();
    let sizes = [vk::DescriptorPoolSize::default()
        .ty(vk::DescriptorType::STORAGE_BUFFER)
        .descriptor_count(total.max(1))];
    let pool = dev
        .create_descriptor_pool(
            &vk::DescriptorPoolCreateInfo::default()
                .pool_sizes(&sizes)
                .max_sets(ds.len().max(1) as u32),
            None,
        )
        .map_err(vkr("vkCreateDescriptorPool"))?;
    let cpool = dev
        .create_command_pool(
            &vk::CommandPoolCreateInfo::default().queue_family_index(qf),
            None,
        )
        .map_err(vkr("vkCreateCommandPool"))?;
    let cb = dev
        .allocate_command_buffers(
            &vk::CommandBufferAllocateInfo::default()
                .command_pool(cpool)
                .command_buffer_count(1),
        )
        .map_err(vkr("vkAllocateCommandBuffers"))?[0];
    dev.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
        .map_err(vkr("vkBeginCommandBuffer"))?;
    for (i, d) in ds.iter().enumerate() {
        let k = d["kernel"].as_u64().ok_or("kernel")? as usize;
        let (pipe, layout, sl, _) = pipes[k];
        let sls = [sl];
        let set = dev
            .allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(pool)
                    .set_layouts(&sls),
            )
            .map_err(vkr("vkAllocateDescriptorSets"))?[0];
        let idx: Vec<usize> = d["buffers"]
            .as_array()
            .ok_or("buffers")?
            .iter()
            .map(|b| b.as_u64().unwrap_or(0) as usize)
            .collect();
        let infos: Vec<[vk::DescriptorBufferInfo; 1]> = idx
            .iter()
            .map(|&b| {
                [vk::DescriptorBufferInfo::default()
                    .buffer(made[b].0)
                    .range(vk::WHOLE_SIZE)]
            })
            .collect();
        let writes: Vec<_> = infos
            .iter()
            .enumerate()
            .map(|(j, info)| {
                vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(j as u32)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(info)
            })
            .collect();
        dev.update_descriptor_sets(&writes, &[]);
        dev.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipe);
        dev.cmd_bind_descriptor_sets(cb, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
        let mut push: Vec<u32> = d["push"]
            .as_array()
            .ok_or("push")?
            .iter()
            .map(|c| count(c, &lens).map(|v| v as u32))
            .collect::<Res<_>>()?;
        let (times, slot) = match &d["repeat"] {
            Value::Array(r) => (count(&r[0], &lens)?, r[1].as_u64().unwrap_or(0) as usize),
            _ => (1, usize::MAX),
        };
        for t in 0..times {
            if slot < push.len() {
                push[slot] = t as u32;
            }
            if !push.is_empty() {
                let bytes: Vec<u8> = push.iter().flat_map(|v| v.to_le_bytes()).collect();
                dev.cmd_push_constants(cb, layout, vk::ShaderStageFlags::COMPUTE, 0, &bytes);
            }
            match d["indirect"].as_u64() {
                Some(b) => dev.cmd_dispatch_indirect(cb, made[b as usize].0, 0),
                None => dev.cmd_dispatch(cb, count(&d["groups"], &lens)? as u32, 1, 1),
            }
            if i + 1 < ds.len() || t + 1 < times {
                let barrier = [vk::MemoryBarrier::default()
                    .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                    .dst_access_mask(
                        vk::AccessFlags::SHADER_READ
                            | vk::AccessFlags::SHADER_WRITE
                            | vk::AccessFlags::INDIRECT_COMMAND_READ,
                    )];
                dev.cmd_pipeline_barrier(
                    cb,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::DRAW_INDIRECT,
                    vk::DependencyFlags::empty(),
                    &barrier,
                    &[],
                    &[],
                );
            }
        }
    }
    let done = [vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::SHADER_WRITE)
        .dst_access_mask(vk::AccessFlags::HOST_READ)];
    dev.cmd_pipeline_barrier(
        cb,
        vk::PipelineStageFlags::COMPUTE_SHADER,
        vk::PipelineStageFlags::HOST,
        vk::DependencyFlags::empty(),
        &done,
        &[],
        &[],
    );
    dev.end_command_buffer(cb)
        .map_err(vkr("vkEndCommandBuffer"))?;
    let cbs = [cb];
    let fence = dev
        .create_fence(&vk::FenceCreateInfo::default(), None)
        .map_err(vkr("vkCreateFence"))?;
    dev.queue_submit(
        queue,
        &[vk::SubmitInfo::default().command_buffers(&cbs)],
        fence,
    )
    .map_err(vkr("vkQueueSubmit"))?;
    dev.wait_for_fences(&[fence], true, u64::MAX)
        .map_err(vkr("vkWaitForFences"))?;

    // The status word, the device-computed lengths, the result.
    // At most the buffer's bytes, whatever a length read from the device says.
    let read = |b: usize, n: usize| {
        std::slice::from_raw_parts(made[b].2, n.min(made[b].3 as usize)).to_vec()
    };
    let mut out = None;
    if let Some(s) = m["status_buffer"].as_u64() {
        let word = u32::from_le_bytes(read(s as usize, 4).try_into().unwrap());
        if word != 0 {
            let errs = m["device_errors"].as_array().ok_or("device_errors")?;
            out = Some(Outcome::Errors(
                (0..32)
                    .filter(|i| word & (1 << i) != 0)
                    .map(|i| {
                        let Some(e) = errs.get(i as usize) else {
                            return format!("an error bit ({i}) the manifest does not list");
                        };
                        format!(
                            "{} ERROR: {}",
                            e["class"].as_str().unwrap_or("").to_uppercase(),
                            e["message"].as_str().unwrap_or("")
                        )
                    })
                    .collect(),
            ));
        }
    }
    for d in m["device_lengths"].as_array().ok_or("device_lengths")? {
        let b = d["buffer"].as_u64().ok_or("buffer")? as usize;
        let v = i32::from_le_bytes(read(b, 4).try_into().unwrap());
        lens.insert(
            d["length"].as_str().unwrap_or("").to_string(),
            v.max(0) as u64,
        );
    }
    if out.is_none() {
        let r = &m["result"];
        let elem = r["type"].as_str().ok_or("result type")?;
        let shape: Vec<u64> = r["shape"]
            .as_array()
            .ok_or("result shape")?
            .iter()
            .map(|d| dim(d, &lens))
            .collect::<Res<_>>()?;
        let n: u64 = shape.iter().product();
        let b = r["buffer"].as_u64().ok_or("result buffer")? as usize;
        let data = decode(elem, &read(b, (n * width(elem)) as usize));
        out = Some(Outcome::Value { shape, data });
    }
    dev.device_wait_idle().ok();
    dev.destroy_fence(fence, None);
    dev.destroy_command_pool(cpool, None);
    dev.destroy_descriptor_pool(pool, None);
    for (p, l, s, _) in pipes {
        dev.destroy_pipeline(p, None);
        dev.destroy_pipeline_layout(l, None);
        dev.destroy_descriptor_set_layout(s, None);
    }
    dev.destroy_shader_module(module, None);
    for (b, memory, _, _) in made {
        dev.destroy_buffer(b, None);
        dev.free_memory(memory, None);
    }
    dev.destroy_device(None);
    instance.destroy_instance(None);
    out.ok_or("no outcome".into())
}

#[allow(dead_code)]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((spv, rest)) = args.split_first() else {
        eprintln!("usage: aot_host PROG.spv NUMBER…   (PROG.json beside it)");
        std::process::exit(2);
    };
    let omega: Vec<f64> = rest
        .iter()
        .map(|a| a.replace('¯', "-").parse().unwrap_or(0.0))
        .collect();
    match run(Path::new(spv), &omega) {
        Ok(Outcome::Value { shape, data }) => {
            let text: Vec<String> = data.iter().map(|v| v.to_string()).collect();
            println!("{}", text.join(" "));
            if shape.len() > 1 {
                eprintln!("shape {shape:?}");
            }
        }
        Ok(Outcome::Errors(es)) => {
            for e in es {
                eprintln!("{e}");
            }
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("aot_host: {e}");
            std::process::exit(2);
        }
    }
}
