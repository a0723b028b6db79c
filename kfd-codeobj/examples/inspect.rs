//! Prints what a code object holds: target, segments, relocations, and
//! per kernel its metadata, arguments and kernel descriptor fields. Given
//! an offload bundle (`hipcc --genco` output), it lists the entries and
//! inspects each AMDGPU code object in it.
//!
//! ```text
//! cargo run -p kfd-codeobj --example inspect [file.co]
//! ```
//!
//! Without an argument it inspects `kfd_codeobj::samples::VECTOR_ADD_GFX90A`
//! (gfx90a, code object v5).

use kfd_codeobj::{CodeObject, Feature, OffloadBundle};
use kfd_sys::hsa::kernel_code_properties as props;

/// The user SGPR properties, in descriptor bit order.
const PROPERTIES: &[(u32, &str)] = &[
    (
        props::ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER,
        "private_segment_buffer",
    ),
    (props::ENABLE_SGPR_DISPATCH_PTR, "dispatch_ptr"),
    (props::ENABLE_SGPR_QUEUE_PTR, "queue_ptr"),
    (
        props::ENABLE_SGPR_KERNARG_SEGMENT_PTR,
        "kernarg_segment_ptr",
    ),
    (props::ENABLE_SGPR_DISPATCH_ID, "dispatch_id"),
    (props::ENABLE_SGPR_FLAT_SCRATCH_INIT, "flat_scratch_init"),
    (
        props::ENABLE_SGPR_PRIVATE_SEGMENT_SIZE,
        "private_segment_size",
    ),
    (props::ENABLE_WAVEFRONT_SIZE32, "wavefront_size32"),
    (props::USES_DYNAMIC_STACK, "uses_dynamic_stack"),
];

fn feature(f: Feature) -> &'static str {
    match f {
        Feature::Unsupported => "unsupported",
        Feature::Any => "any",
        Feature::Off => "off",
        Feature::On => "on",
    }
}

fn main() {
    if let Err(e) = run() {
        eprintln!("inspect: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let (name, bytes) = match std::env::args().nth(1) {
        Some(path) => {
            let bytes = std::fs::read(&path).map_err(|e| format!("{path}: {e}"))?;
            (path, bytes)
        }
        None => (
            "samples::VECTOR_ADD_GFX90A".to_string(),
            kfd_codeobj::samples::VECTOR_ADD_GFX90A.to_vec(),
        ),
    };
    if OffloadBundle::is_bundle(&bytes) {
        let bundle = OffloadBundle::parse(&bytes).map_err(|e| format!("{name}: {e}"))?;
        println!(
            "{name}: offload bundle of {} entries",
            bundle.entries().len()
        );
        for entry in bundle.entries() {
            println!("  {} ({} bytes)", entry.id, entry.data.len());
        }
        for entry in bundle.entries() {
            if entry.target_id().is_some() {
                println!();
                inspect(&format!("{name} [{}]", entry.id), entry.data)?;
            }
        }
        return Ok(());
    }
    inspect(&name, &bytes)
}

/// Prints one code object.
fn inspect(name: &str, bytes: &[u8]) -> Result<(), String> {
    let co = CodeObject::parse(bytes).map_err(|e| format!("{name}: {e}"))?;
    let err = |e: kfd_codeobj::Error| format!("{name}: {e}");
    let target = co.target();
    println!(
        "{name}: {target}, code object v{}, e_flags {:#x} (xnack {}, sramecc {})",
        co.version().number(),
        co.e_flags(),
        feature(target.xnack),
        feature(target.sramecc)
    );
    let md = co.metadata();
    if let Some([major, minor]) = md.version {
        println!("metadata version {major}.{minor}");
    }
    if let Some(t) = &md.target {
        println!("metadata target {t}");
    }

    let layout = co.layout();
    println!(
        "load image: {:#x} bytes from vaddr {:#x}, base aligned to {:#x}",
        layout.size, layout.start_vaddr, layout.align
    );
    for s in co.segments() {
        let rwx: String = [(4, 'r'), (2, 'w'), (1, 'x')]
            .iter()
            .map(|&(bit, c)| if s.flags & bit != 0 { c } else { '-' })
            .collect();
        println!(
            "  segment {rwx} vaddr {:#07x} file {:#07x} memory {:#07x}",
            s.vaddr,
            s.data.len(),
            s.mem_size
        );
    }
    println!("relocations: {}", co.relocations().len());
    for r in co.relocations() {
        let symbol = r.symbol.as_ref().map_or("", |s| s.name.as_str());
        println!("  {:#07x} {:?} {symbol} {:+#x}", r.offset, r.kind, r.addend);
    }

    // Descriptors hold offsets only: any aligned base shows them.
    let image = co.load(0).map_err(err)?;
    for k in image.kernels().map_err(err)? {
        let m = &k.kernel.metadata;
        println!();
        println!(
            "kernel {} (descriptor {} at {:#x})",
            m.name, m.symbol, k.descriptor_address
        );
        println!(
            "  kernarg {} bytes (align {}), group {}, private {}, wave{}, {} SGPRs, {} VGPRs{}",
            m.kernarg_segment_size,
            m.kernarg_segment_align,
            m.group_segment_fixed_size,
            m.private_segment_fixed_size,
            m.wavefront_size,
            m.sgpr_count,
            m.vgpr_count,
            m.agpr_count
                .map_or(String::new(), |a| format!(", {a} AGPRs"))
        );
        println!("  args:");
        for (i, a) in m.args.iter().enumerate() {
            let line = format!(
                "    [{i:2}] offset {:3} size {} {:<26} {}{}",
                a.offset,
                a.size,
                a.value_kind.to_string(),
                a.type_name.as_deref().unwrap_or(""),
                a.address_space
                    .as_deref()
                    .map_or(String::new(), |s| format!(" ({s})"))
            );
            println!("{}", line.trim_end());
        }
        let d = &k.descriptor;
        println!("  descriptor:");
        println!(
            "    group_segment_fixed_size   {}",
            d.group_segment_fixed_size
        );
        println!(
            "    private_segment_fixed_size {}",
            d.private_segment_fixed_size
        );
        println!("    kernarg_size               {}", d.kernarg_size);
        println!(
            "    kernel_code_entry_offset   {:#x} (entry at {:#x})",
            d.kernel_code_entry_byte_offset,
            k.entry_address()
        );
        println!(
            "    compute_pgm_rsrc1          {:#010x}",
            d.compute_pgm_rsrc1
        );
        println!(
            "    compute_pgm_rsrc2          {:#010x}",
            d.compute_pgm_rsrc2
        );
        println!(
            "    compute_pgm_rsrc3          {:#010x}",
            d.compute_pgm_rsrc3
        );
        let set: Vec<&str> = PROPERTIES
            .iter()
            .filter(|(bit, _)| u32::from(d.kernel_code_properties) & bit != 0)
            .map(|(_, name)| *name)
            .collect();
        println!(
            "    kernel_code_properties     {:#06x} ({})",
            d.kernel_code_properties,
            set.join(", ")
        );
        println!("    kernarg_preload            {:#06x}", d.kernarg_preload);
    }
    Ok(())
}
