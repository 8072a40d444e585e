//! Integer products on cooperative matrices (SPV_KHR_cooperative_matrix): 8-bit
//! operands packed four to a word, multiplied a fragment at a time by each
//! subgroup with i32 sums. Such a kernel's module uses the Vulkan memory model, as
//! the extension requires; it holds that kernel alone.

use super::*;
use arrc_ir::plan::CoopTile;
use spirv::{CooperativeMatrixLayout, CooperativeMatrixOperands};

/// `CooperativeMatrixUse`: the left operand, the right one, the accumulator.
const USE_A: u32 = 0;
const USE_B: u32 = 1;
const USE_ACC: u32 = 2;

impl Emitter {
    /// What a module with cooperative matrices declares: the extension, the Vulkan
    /// memory model it requires (SPIR-V 1.3 takes that as an extension too) and
    /// 8-bit integer types.
    pub(super) fn use_cooperative_matrices(&mut self) {
        self.b.extension("SPV_KHR_cooperative_matrix");
        self.b.extension("SPV_KHR_vulkan_memory_model");
        self.b.capability(Capability::CooperativeMatrixKHR);
        self.b.capability(Capability::VulkanMemoryModel);
        self.b.capability(Capability::Int8);
        self.b
            .memory_model(AddressingModel::Logical, MemoryModel::Vulkan);
    }

    /// `out = a+.×b` on cooperative matrices (push constants: `n` workgroup tiles,
    /// `tn` of them along a row, `kw` words along a packed line, `np` outputs to a
    /// padded row). Workgroup tiles are taken grid-stride; in each, subgroup `s`
    /// computes the `rows × cols` fragments at fragment row `(s ÷ subgroups_n)·rows`
    /// and column `(s mod subgroups_n)·cols`, loading each step's fragments of `a`
    /// (row-major, `kw` words a row) and of `b` (column-major: its columns are the
    /// packed lines) straight from the operands, which are padded to whole tiles.
    pub(super) fn coop_matmul_kernel(
        &mut self,
        cx: &mut Cx,
        (a, b, out): (u32, u32, u32),
        tile: CoopTile,
    ) -> R<()> {
        self.use_cooperative_matrices();
        let u = self.u32_t;
        let i8t = self.b.type_int(8, 1);
        let i32t = self.ty(ElemType::I32);
        let scope = self.c_u32(SCOPE_SUBGROUP);
        let (fm, fn_, fk) = (self.c_u32(tile.m), self.c_u32(tile.n), self.c_u32(tile.k));
        let uses = [self.c_u32(USE_A), self.c_u32(USE_B), self.c_u32(USE_ACC)];
        let mat_a = self
            .b
            .type_cooperative_matrix_khr(i8t, scope, fm, fk, uses[0]);
        let mat_b = self
            .b
            .type_cooperative_matrix_khr(i8t, scope, fk, fn_, uses[1]);
        let mat_c = self
            .b
            .type_cooperative_matrix_khr(i32t, scope, fm, fn_, uses[2]);
        let zero_i = self.scalar(Scalar::I32(0));
        let zero_c = self.b.constant_composite(mat_c, [zero_i]);
        let row_major = self.c_u32(CooperativeMatrixLayout::RowMajorKHR as u32);
        let col_major = self.c_u32(CooperativeMatrixLayout::ColumnMajorKHR as u32);
        let signed = CooperativeMatrixOperands::MATRIX_A_SIGNED_COMPONENTS_KHR
            | CooperativeMatrixOperands::MATRIX_B_SIGNED_COMPONENTS_KHR
            | CooperativeMatrixOperands::MATRIX_C_SIGNED_COMPONENTS_KHR
            | CooperativeMatrixOperands::MATRIX_RESULT_SIGNED_COMPONENTS_KHR;
        let tn = self.push_constant(cx, 1)?;
        let kw = self.push_constant(cx, 2)?;
        let np = self.push_constant(cx, 3)?;
        let sg = self.load_builtin(cx, BuiltIn::SubgroupId)?;
        let sgn = self.c_u32(tile.subgroups_n);
        let sr = self.b.u_div(u, None, sg, sgn).map_err(be)?;
        let sc = self.b.u_mod(u, None, sg, sgn).map_err(be)?;
        let (rows, cols) = (tile.rows as usize, tile.cols as usize);
        let accs: Vec<Word> = (0..rows * cols).map(|_| self.local(mat_c)).collect();
        let tile_var = self.local(u);
        let k_var = self.local(u);
        // Words of a packed line one step of `k` takes.
        let step = self.c_u32(tile.k / 4);
        let cxr = &*cx;
        let (group, groups, tiles) = (cx.group, cx.groups, cx.n);
        self.count_loop(tile_var, group, tiles, groups, |e, t| {
            let tr = e.b.u_div(u, None, t, tn).map_err(be)?;
            let tc = e.b.u_mod(u, None, t, tn).map_err(be)?;
            // This subgroup's first row and column of outputs.
            let tm = e.c_u32(tile.tile_m());
            let row0 = e.umul(tr, tm)?;
            let sub_m = e.c_u32(tile.m * tile.rows);
            let off = e.umul(sr, sub_m)?;
            let row0 = e.uadd(row0, off)?;
            let tnn = e.c_u32(tile.tile_n());
            let col0 = e.umul(tc, tnn)?;
            let sub_n = e.c_u32(tile.n * tile.cols);
            let off = e.umul(sc, sub_n)?;
            let col0 = e.uadd(col0, off)?;
            for &acc in &accs {
                e.store(acc, zero_c)?;
            }
            // The first word of line `line0 + 16·f` at word `kk`.
            let word = |e: &mut Self, line0: Word, f: u32, side: u32, kk: Word| -> R<Word> {
                let d = e.c_u32(f * side);
                let line = e.uadd(line0, d)?;
                let at = e.umul(line, kw)?;
                e.uadd(at, kk)
            };
            let zero = e.c_u32(0);
            e.count_loop(k_var, zero, kw, step, |e, kk| {
                let mut av = vec![];
                for i in 0..tile.rows {
                    let at = word(e, row0, i, tile.m, kk)?;
                    let (p, _) = e.elem_ptr(cxr, a, at)?;
                    let m = e
                        .b
                        .cooperative_matrix_load_khr(mat_a, None, p, row_major, Some(kw), None, [])
                        .map_err(be)?;
                    av.push(m);
                }
                let mut bv = vec![];
                for j in 0..tile.cols {
                    let at = word(e, col0, j, tile.n, kk)?;
                    let (p, _) = e.elem_ptr(cxr, b, at)?;
                    let m = e
                        .b
                        .cooperative_matrix_load_khr(mat_b, None, p, col_major, Some(kw), None, [])
                        .map_err(be)?;
                    bv.push(m);
                }
                for (i, &x) in av.iter().enumerate() {
                    for (j, &y) in bv.iter().enumerate() {
                        let acc = accs[i * cols + j];
                        let c = e.load(mat_c, acc)?;
                        let r = e
                            .b
                            .cooperative_matrix_mul_add_khr(mat_c, None, x, y, c, Some(signed))
                            .map_err(be)?;
                        e.store(acc, r)?;
                    }
                }
                Ok(())
            })?;
            for i in 0..tile.rows {
                for j in 0..tile.cols {
                    let dr = e.c_u32(i * tile.m);
                    let r = e.uadd(row0, dr)?;
                    let dc = e.c_u32(j * tile.n);
                    let c = e.uadd(col0, dc)?;
                    let at = e.umul(r, np)?;
                    let at = e.uadd(at, c)?;
                    let (p, _) = e.elem_ptr(cxr, out, at)?;
                    let v = e.load(mat_c, accs[i as usize * cols + j as usize])?;
                    e.b.cooperative_matrix_store_khr(p, v, row_major, Some(np), None, [])
                        .map_err(be)?;
                }
            }
            Ok(())
        })
    }

    /// Packs the integers `arg` (within ±127) of an `r×c` matrix (push constants 1
    /// and 2; 3 the words to a line) four to an i32 word of `out` as 8-bit two's
    /// complement, one word per element of the grid-stride share (push constant 0
    /// counts them): word `i·w+q` holds row `i`'s elements `4q…4q+3` (byte `j` the
    /// element `4q+j`) or, with `cols`, column `i`'s. Bytes past the matrix are 0.
    pub(super) fn pack_i8_kernel(
        &mut self,
        cx: &mut Cx,
        arg: &KExpr,
        out: u32,
        cols: bool,
    ) -> R<()> {
        let u = self.u32_t;
        let it = self.ty(ElemType::I32);
        let i = self.local(u);
        let trip = self.local(u);
        let byte = self.local(it);
        let r = self.push_constant(cx, 1)?;
        let c = self.push_constant(cx, 2)?;
        let w = self.push_constant(cx, 3)?;
        // Lines and positions along them: rows and columns, or columns and rows.
        let (lines, along) = if cols { (c, r) } else { (r, c) };
        let per = |e: &mut Self, cx: &Cx, wi: Word| -> R<()> {
            let line = e.b.u_div(u, None, wi, w).map_err(be)?;
            let q = e.b.u_mod(u, None, wi, w).map_err(be)?;
            let four = e.c_u32(4);
            let first = e.umul(q, four)?;
            let in_line = e.ult(line, lines)?;
            let mut word = e.scalar(Scalar::I32(0));
            for j in 0..4u32 {
                let dj = e.c_u32(j);
                let pos = e.uadd(first, dj)?;
                let in_pos = e.ult(pos, along)?;
                let inside = e.b.logical_and(e.bool_t, None, in_line, in_pos).map_err(be)?;
                let z = e.scalar(Scalar::I32(0));
                e.store(byte, z)?;
                e.if_then(inside, |e| {
                    // Element (line, pos) of the matrix, in ravel order.
                    let at = if cols {
                        let at = e.umul(pos, c)?;
                        e.uadd(at, line)?
                    } else {
                        let at = e.umul(line, c)?;
                        e.uadd(at, pos)?
                    };
                    let v = e.expr(cx, arg, Ix::flat(at))?;
                    e.store(byte, v)
                })?;
                let v = e.load(it, byte)?;
                let mask = e.scalar(Scalar::I32(255));
                let v = e.b.bitwise_and(it, None, v, mask).map_err(be)?;
                let sh = e.c_u32(8 * j);
                let v = e.b.shift_left_logical(it, None, v, sh).map_err(be)?;
                word = e.b.bitwise_or(it, None, word, v).map_err(be)?;
            }
            e.store_elem(cx, out, wi, word)
        };
        self.unrolled_share(cx, &per, i, trip)
    }
}
