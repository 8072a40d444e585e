//! `mpirun -np 2 arrc-mpi 'x←?1e8⍴0 ⋄ +/x×x'`: every rank runs the program on its
//! own device, with the arrays split across all of them; rank 0 prints the value.

use arrc::{Backend, ElemType, Session};
use arrc_mpi::{node_rank, MpiPeers};
use clap::Parser;
use mpi::topology::Communicator;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "arrc-mpi",
    about = "Run an arrc program on every rank of an MPI job, arrays split across their devices"
)]
struct Cli {
    /// The program; statements may be separated by ⋄.
    #[arg(allow_hyphen_values = true)]
    expr: Option<String>,
    /// Read the program from a file.
    #[arg(long, short)]
    file: Option<PathBuf>,
    /// This rank's Vulkan devices (default: one, the rank's place on its host modulo
    /// the devices there, so that the ranks of a host share its GPUs).
    #[arg(long, value_delimiter = ',')]
    devices: Vec<usize>,
    /// The fewest elements of an array worth splitting.
    #[arg(long, default_value_t = arrc::shard::DEFAULT_SPLIT_FROM)]
    split_from: usize,
    /// Float type of results such as `÷` (`⎕FR`): f32 or f64.
    #[arg(long, default_value = "f32")]
    float: String,
    /// Print rank 0's counts on stderr (statements split, bytes moved).
    #[arg(long)]
    stats: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Some(universe) = mpi::initialize() else {
        eprintln!("arrc-mpi: MPI could not be initialized (run it under mpirun)");
        return ExitCode::from(2);
    };
    let world = universe.world();
    let rank = world.rank();
    let code = run(&cli, &world, rank == 0);
    // (The session, and with it the communicator's users, are gone before MPI
    // finalizes with the universe.)
    drop(universe);
    code
}

fn run(cli: &Cli, world: &mpi::topology::SimpleCommunicator, first: bool) -> ExitCode {
    let src = match (&cli.expr, &cli.file) {
        (Some(e), None) => e.clone(),
        (None, Some(f)) => match std::fs::read_to_string(f) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("arrc-mpi: {}: {e}", f.display());
                return ExitCode::from(2);
            }
        },
        _ => {
            eprintln!("arrc-mpi: give a program or --file");
            return ExitCode::from(2);
        }
    };
    let devices = if cli.devices.is_empty() {
        let count = arrc::devices().map(|d| d.len()).unwrap_or(1).max(1);
        vec![node_rank(world) % count]
    } else {
        cli.devices.clone()
    };
    let peers = Box::new(MpiPeers::new(world.duplicate()));
    let mut s = match Session::with_peers(Backend::Vulkan, &devices, peers) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("arrc-mpi: {e}");
            return ExitCode::from(1);
        }
    };
    s.set_split_from(cli.split_from);
    match cli.float.as_str() {
        "f32" => s.set_float(ElemType::F32),
        "f64" => s.set_float(ElemType::F64),
        other => {
            eprintln!("arrc-mpi: --float {other}: use f32 or f64");
            return ExitCode::from(2);
        }
    }
    // Every rank evaluates the same statements; they agree on every value the host
    // sees, so only rank 0 speaks.
    let out = s.eval(&src);
    if cli.stats && first {
        let st = s.stats();
        eprintln!(
            "arrc-mpi: ranks {} statements split {} bytes moved {}",
            world.size(),
            st.split_statements,
            st.moved_bytes
        );
    }
    match out {
        Ok(o) => {
            if first {
                if let Some(v) = o.value {
                    println!("{}", s.display(&v));
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            if first {
                eprint!("{}", arrc::diagnostics::render(&src, &e, false));
            }
            ExitCode::from(1)
        }
    }
}
