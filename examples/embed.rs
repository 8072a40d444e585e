//! Embedding arrc: evaluate an expression on data from Rust.
//! Run with `cargo run -p arrc --example embed`.

use arrc::{Array, Backend, Data, Session};

fn main() -> Result<(), arrc::Error> {
    let mut session = Session::new(Backend::Auto)?;
    match session.device() {
        Some(d) => println!("device: {} (subgroup size {})", d.name, d.subgroup_size),
        None => println!("no Vulkan device: computing on the CPU"),
    }
    let prices: Vec<f32> = (1..=8).map(|i| i as f32 * 1.25).collect();
    let qty: Vec<i32> = vec![3, 1, 4, 1, 5, 9, 2, 6];
    session.set("p", Array::vector(Data::F32(prices)))?;
    session.set("q", Array::vector(Data::I32(qty)))?;

    let total = session.eval("+/p×q")?.value.expect("a value");
    println!("+/p×q = {}", arrc::display(&total));
    let running = session.eval("+\\q")?.value.expect("a value");
    println!("+\\q   = {:?} with shape {:?}", running.data, running.shape);
    Ok(())
}
