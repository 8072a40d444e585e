//! arrc over MPI: each process (rank) holds its pieces of the arrays split across
//! the devices of every rank (`arrc::shard`), runs its part of each statement on
//! its own device, and shares what the others need with `MPI_Allgatherv`: the
//! pieces' folds (every rank then combines the same values in the same order, so
//! all get the same bits: a reduction, or a scan's carries as an exclusive scan of
//! them), the pieces' row counts after a compress, errors and types (so that every
//! rank goes on, or runs the statement as on one device, alike), and the pieces of
//! an array the host needs whole.

use arrc::shard::Peers;
use mpi::datatype::PartitionMut;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;

/// The most bytes one rank sends in one `MPI_Allgatherv` (counts are C `int`s).
const CHUNK: usize = 1 << 30;

/// The processes of an MPI communicator as [`Peers`].
pub struct MpiPeers {
    comm: SimpleCommunicator,
}

impl MpiPeers {
    pub fn new(comm: SimpleCommunicator) -> MpiPeers {
        MpiPeers { comm }
    }
}

impl Peers for MpiPeers {
    fn rank(&self) -> usize {
        self.comm.rank() as usize
    }

    fn size(&self) -> usize {
        self.comm.size() as usize
    }

    fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        let size = self.size();
        let mut lens = vec![0u64; size];
        self.comm
            .all_gather_into(&(bytes.len() as u64), &mut lens[..]);
        let mut out: Vec<Vec<u8>> = lens
            .iter()
            .map(|&n| Vec::with_capacity(n as usize))
            .collect();
        let most = lens.iter().copied().max().unwrap_or(0) as usize;
        // In rounds of at most CHUNK bytes a rank, so that counts fit an int.
        let mut from = 0;
        while from < most {
            let part = |n: u64| (n as usize).saturating_sub(from).min(CHUNK);
            let counts: Vec<i32> = lens.iter().map(|&n| part(n) as i32).collect();
            let displs: Vec<i32> = counts
                .iter()
                .scan(0i32, |acc, &c| {
                    let d = *acc;
                    *acc += c;
                    Some(d)
                })
                .collect();
            let total: usize = counts.iter().map(|&c| c as usize).sum();
            let mut buf = vec![0u8; total];
            let mine = &bytes[from.min(bytes.len())..(from + CHUNK).min(bytes.len())];
            {
                let mut partition = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
                self.comm.all_gather_varcount_into(mine, &mut partition);
            }
            for (r, o) in out.iter_mut().enumerate() {
                let d = displs[r] as usize;
                o.extend_from_slice(&buf[d..d + counts[r] as usize]);
            }
            from += CHUNK;
        }
        out
    }
}

/// This rank's place among the ranks on its own host (for choosing a device).
pub fn node_rank(comm: &SimpleCommunicator) -> usize {
    comm.split_shared(0).rank() as usize
}
