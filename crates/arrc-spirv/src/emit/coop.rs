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
    /// `tn` of them along a row, `kw` words to a packed row of `a` and column of
    /// `b`, `np` outputs to a padded row of `out` and bytes to a packed row of `b`
    /// where `b` is packed along its rows). Workgroup tiles
    /// are taken grid-stride. Each staged step, the workgroup copies `tile_k` of
    /// the inner length of its rows of `a` and columns of `b` into workgroup memory
    /// (two buffers: the next step's words are read into registers while this one
    /// multiplies, then stored in the other buffer, one barrier a step); subgroup
    /// `s` multiplies the `rows × cols` fragments at fragment row
    /// `(s ÷ subgroups_n)·rows` and column `(s mod subgroups_n)·cols` of the tile.
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
        let b_layout = self.c_u32(CooperativeMatrixLayout::ColumnMajorKHR as u32);
        let signed = CooperativeMatrixOperands::MATRIX_A_SIGNED_COMPONENTS_KHR
            | CooperativeMatrixOperands::MATRIX_B_SIGNED_COMPONENTS_KHR
            | CooperativeMatrixOperands::MATRIX_C_SIGNED_COMPONENTS_KHR
            | CooperativeMatrixOperands::MATRIX_RESULT_SIGNED_COMPONENTS_KHR;
        // Workgroup memory is read across the subgroups after a barrier: its
        // accesses are non-private (Vulkan memory model).
        let shared_access = Some(spirv::MemoryAccess::NON_PRIVATE_POINTER);
        let tn = self.push_constant(cx, 1)?;
        let kw = self.push_constant(cx, 2)?;
        let np = self.push_constant(cx, 3)?;
        let four = self.c_u32(4);
        let sg = self.load_builtin(cx, BuiltIn::SubgroupId)?;
        let sgn = self.c_u32(tile.subgroups_n);
        let sr = self.b.u_div(u, None, sg, sgn).map_err(be)?;
        let sc = self.b.u_mod(u, None, sg, sgn).map_err(be)?;
        // Workgroup memory, in 16-byte units: two stages of `a`'s lines (tile_m of
        // tile_k bytes) then `b`'s (tile_n of tile_k bytes, its columns), each
        // line padded (`staged_strides`, in words).
        let v4 = self.b.type_vector(i32t, 4);
        let (sa, sb) = tile.staged_strides();
        let (sa, sb) = (sa / 4, sb / 4);
        let stage = tile.stage_words() / 4;
        let shared = {
            let len = self.c_u32(2 * stage);
            let arr = self.b.type_array(v4, len);
            let p = self.ptr(StorageClass::Workgroup, arr);
            self.workgroup_var(p)
        };
        let shared_v4 = self.ptr(StorageClass::Workgroup, v4);
        let b_base = tile.tile_m() * sa;
        // The operands as arrays of 16-byte vectors (their rows are whole vectors).
        let (va, vb) = (
            self.vec4_view(cx, a, ElemType::I32, false)?,
            self.vec4_view(cx, b, ElemType::I32, false)?,
        );
        let global_v4 = self.ptr(StorageClass::StorageBuffer, v4);
        // Vectors of a step each invocation copies, of `a` and of `b` (the planner
        // sizes the workgroup: `subgroups` whole subgroups; `CoopTile::runs_on`).
        let invocations = self.wg_n;
        let ka = tile.tile_k() / 16;
        let a_vecs = tile.tile_m() * ka;
        let b_vecs = tile.tile_n() * ka;
        if invocations == 0
            || !a_vecs.is_multiple_of(invocations)
            || !b_vecs.is_multiple_of(invocations)
        {
            return Err(crate::SpirvError::Build(format!(
                "a {}×{}×{} cooperative tile does not share out over {invocations} invocations",
                tile.tile_m(),
                tile.tile_n(),
                tile.tile_k()
            )));
        }
        // Two sets of registers for the copies: a step's vectors are read two
        // steps ahead of their use, and stored into workgroup memory one step
        // ahead, so that a read has two steps' products to arrive in (one
        // workgroup a multiprocessor: the kernel takes 159 registers on an H200).
        let regs = |e: &mut Self, n: u32| -> Vec<Word> { (0..n).map(|_| e.local(v4)).collect() };
        let sets = [
            (
                regs(self, a_vecs / invocations),
                regs(self, b_vecs / invocations),
            ),
            (
                regs(self, a_vecs / invocations),
                regs(self, b_vecs / invocations),
            ),
        ];
        let (a_regs, b_regs) = (&sets[0].0, &sets[0].1);
        let (rows, cols) = (tile.rows as usize, tile.cols as usize);
        let accs: Vec<Word> = (0..rows * cols).map(|_| self.local(mat_c)).collect();
        let tile_var = self.local(u);
        let k_var = self.local(u);
        // Vectors of a packed row of `a` one staged step takes; the rows' lengths
        // in vectors.
        let steps_vecs = self.c_u32(ka);
        let kv = self.b.u_div(u, None, kw, four).map_err(be)?;
        // Where each copied vector lies: (line, vector along it) in a step's block.
        let lid = cx.lid;
        let place = |e: &mut Self, r: usize, per_line: u32| -> R<(Word, Word)> {
            let off = e.c_u32(r as u32 * invocations);
            let w = e.uadd(lid, off)?;
            let pl = e.c_u32(per_line);
            let line = e.b.u_div(u, None, w, pl).map_err(be)?;
            let at = e.b.u_mod(u, None, w, pl).map_err(be)?;
            Ok((line, at))
        };
        let mut a_at = vec![];
        for r in 0..a_regs.len() {
            a_at.push(place(self, r, ka)?);
        }
        let mut b_at = vec![];
        for r in 0..b_regs.len() {
            b_at.push(place(self, r, ka)?);
        }
        let cxr = &*cx;
        let (group, groups, tiles) = (cx.group, cx.groups, cx.n);
        self.count_loop(tile_var, group, tiles, groups, |e, t| {
            let tr = e.b.u_div(u, None, t, tn).map_err(be)?;
            let tc = e.b.u_mod(u, None, t, tn).map_err(be)?;
            let tm = e.c_u32(tile.tile_m());
            let row0 = e.umul(tr, tm)?;
            let tnn = e.c_u32(tile.tile_n());
            let col0 = e.umul(tc, tnn)?;
            let zero = e.c_u32(0);
            // Reads step `s`'s vectors (vector `s·ka…` of `a`'s rows and `b`'s
            // columns, or rows `s·tile_k…` of `b`) into register set `set`.
            let fetch = |e: &mut Self, s: Word, set: usize| -> R<()> {
                let (a_regs, b_regs) = (&sets[set].0, &sets[set].1);
                let kk = e.umul(s, steps_vecs)?;
                for ((&(line, at), &reg), (view, row0, len, first)) in a_at
                    .iter()
                    .zip(a_regs)
                    .map(|x| (x, (va, row0, kv, kk)))
                    // `b`'s columns, as `a`'s rows.
                    .chain(b_at.iter().zip(b_regs).map(|x| (x, (vb, col0, kv, kk))))
                {
                    let r = e.uadd(row0, line)?;
                    let w = e.umul(r, len)?;
                    let w = e.uadd(w, first)?;
                    let w = e.uadd(w, at)?;
                    let p =
                        e.b.access_chain(global_v4, None, view, [zero, w])
                            .map_err(be)?;
                    let v = e.load(v4, p)?;
                    e.store(reg, v)?;
                }
                Ok(())
            };
            // Stores register set `set` in stage buffer `buf` (0 or 1).
            let put = |e: &mut Self, buf: u32, set: usize| -> R<()> {
                let (a_regs, b_regs) = (&sets[set].0, &sets[set].1);
                let base = e.c_u32(buf * stage);
                for ((&(line, at), &reg), (stride, first)) in a_at
                    .iter()
                    .zip(a_regs)
                    .map(|x| (x, (sa, 0)))
                    .chain(b_at.iter().zip(b_regs).map(|x| (x, (sb, b_base))))
                {
                    let s = e.c_u32(stride);
                    let w = e.umul(line, s)?;
                    let w = e.uadd(w, at)?;
                    let f = e.c_u32(first);
                    let w = e.uadd(w, f)?;
                    let w = e.uadd(w, base)?;
                    let p = e.b.access_chain(shared_v4, None, shared, [w]).map_err(be)?;
                    let v = e.load(v4, reg)?;
                    e.b.store(p, v, shared_access, []).map_err(be)?;
                }
                Ok(())
            };
            for &acc in &accs {
                e.store(acc, zero_c)?;
            }
            let zero = e.c_u32(0);
            let kstep = e.b.u_div(u, None, kv, steps_vecs).map_err(be)?;
            // Whether step `s + d` is one of the `kstep`.
            let before = |e: &mut Self, s: Word, d: u32| -> R<Word> {
                let dc = e.c_u32(d);
                let t = e.uadd(s, dc)?;
                e.ult(t, kstep)
            };
            // Step 0 staged, 1 and 2 on their way (set 1, set 0).
            fetch(e, zero, 0)?;
            put(e, 0, 0)?;
            for (d, set) in [(1, 1), (2, 0)] {
                let more = before(e, zero, d)?;
                let dc = e.c_u32(d);
                e.if_then(more, |e| fetch(e, dc, set))?;
            }
            e.barrier()?;
            // The products of the step in stage buffer `buf` (its base in
            // 16-byte units).
            let multiply = |e: &mut Self, base: Word| -> R<()> {
                for q in 0..tile.steps {
                    let mut av = vec![];
                    for i in 0..tile.rows {
                        // Row (sr·rows + i)·m of the tile, byte q·k of the step.
                        let rr = e.c_u32(tile.rows * tile.m);
                        let r = e.umul(sr, rr)?;
                        let di = e.c_u32(i * tile.m * sa + q * tile.k / 16);
                        let ss = e.c_u32(sa);
                        let w = e.umul(r, ss)?;
                        let w = e.uadd(w, di)?;
                        let w = e.uadd(w, base)?;
                        let p = e.b.access_chain(shared_v4, None, shared, [w]).map_err(be)?;
                        let stride = e.c_u32(sa);
                        let m =
                            e.b.cooperative_matrix_load_khr(
                                mat_a,
                                None,
                                p,
                                row_major,
                                Some(stride),
                                shared_access,
                                [],
                            )
                            .map_err(be)?;
                        av.push(m);
                    }
                    let mut bv = vec![];
                    for j in 0..tile.cols {
                        // Column (sc·cols + j)·n of the tile, byte q·k of the
                        // step: a line of the step's `b` and byte q·k along it.
                        let (cc, dj) = (
                            tile.cols * tile.n * sb,
                            b_base + j * tile.n * sb + q * tile.k / 16,
                        );
                        let cc = e.c_u32(cc);
                        let c = e.umul(sc, cc)?;
                        let dj = e.c_u32(dj);
                        let w = e.uadd(c, dj)?;
                        let w = e.uadd(w, base)?;
                        let p = e.b.access_chain(shared_v4, None, shared, [w]).map_err(be)?;
                        let stride = e.c_u32(sb);
                        let m =
                            e.b.cooperative_matrix_load_khr(
                                mat_b,
                                None,
                                p,
                                b_layout,
                                Some(stride),
                                shared_access,
                                [],
                            )
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
                }
                Ok(())
            };
            // Two steps a trip: step `s` (even) in buffer 0, with step `s + 1` in
            // set 1 and `s + 2` in set 0; then step `s + 1` in buffer 1.
            let two = e.c_u32(2);
            e.count_loop(k_var, zero, kstep, two, |e, s| {
                for (half, (buf, set)) in [(0, 1), (1, 0)].into_iter().enumerate() {
                    let this = before(e, s, half as u32)?;
                    e.if_then(this, |e| {
                        let base = e.c_u32(buf * stage);
                        multiply(e, base)?;
                        let next = before(e, s, half as u32 + 1)?;
                        e.if_then(next, |e| put(e, 1 - buf, set))?;
                        e.barrier()?;
                        let later = before(e, s, half as u32 + 3)?;
                        let d = e.c_u32(half as u32 + 3);
                        let at = e.uadd(s, d)?;
                        e.if_then(later, |e| fetch(e, at, set))
                    })?;
                }
                Ok(())
            })?;
            // This subgroup's fragments to `out`.
            let rr = e.c_u32(tile.rows * tile.m);
            let sub_r = e.umul(sr, rr)?;
            let cc = e.c_u32(tile.cols * tile.n);
            let sub_c = e.umul(sc, cc)?;
            for i in 0..tile.rows {
                for j in 0..tile.cols {
                    let dr = e.c_u32(i * tile.m);
                    let r = e.uadd(row0, sub_r)?;
                    let r = e.uadd(r, dr)?;
                    let dc = e.c_u32(j * tile.n);
                    let c = e.uadd(col0, sub_c)?;
                    let c = e.uadd(c, dc)?;
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

    /// Sets word `j` of `out` to 1 where an element of the integers `arg` (push
    /// constant 0 counts them) is past `limits[j]` in magnitude (plain stores:
    /// every writer of a word writes the same).
    pub(super) fn range_flag_kernel(
        &mut self,
        cx: &mut Cx,
        arg: &KExpr,
        limits: &[u32],
        out: u32,
    ) -> R<()> {
        let u = self.u32_t;
        let i = self.local(u);
        let trip = self.local(u);
        let per = |e: &mut Self, cx: &Cx, at: Word| -> R<()> {
            let v = e.expr(cx, arg, Ix::flat(at))?;
            e.flag_past(cx, (v, arg.elem()), limits, out)
        };
        self.unrolled_share(cx, &per, i, trip)
    }

    /// The low slice `l = ((v + 64) & 127) - 64` (in -64..63) of i32 `v`, or its
    /// high one `(v - l) >> 7`, so that `v = 128h + l`.
    fn slice_i8(&mut self, v: Word, high: bool) -> R<Word> {
        let it = self.ty(ElemType::I32);
        let (c64, c127) = (self.scalar(Scalar::I32(64)), self.scalar(Scalar::I32(127)));
        let l = self.b.i_add(it, None, v, c64).map_err(be)?;
        let l = self.b.bitwise_and(it, None, l, c127).map_err(be)?;
        let l = self.b.i_sub(it, None, l, c64).map_err(be)?;
        if !high {
            return Ok(l);
        }
        let h = self.b.i_sub(it, None, v, l).map_err(be)?;
        let seven = self.c_u32(7);
        self.b
            .shift_right_arithmetic(it, None, h, seven)
            .map_err(be)
    }

    /// Sets word `j` of binding `out` to 1 where integer `v` (of type `t`) is past
    /// `limits[j]` in magnitude.
    fn flag_past(&mut self, cx: &Cx, (v, t): (Word, ElemType), limits: &[u32], out: u32) -> R<()> {
        let wide = match t {
            ElemType::I64 => ElemType::I64,
            _ => ElemType::I32,
        };
        let v = self.convert(v, t, wide)?;
        for (j, &limit) in limits.iter().enumerate() {
            let (hi, lo) = (
                self.scalar(Scalar::I64(i64::from(limit)).cast(wide)),
                self.scalar(Scalar::I64(-i64::from(limit)).cast(wide)),
            );
            let above = self
                .b
                .s_greater_than(self.bool_t, None, v, hi)
                .map_err(be)?;
            let below = self.b.s_less_than(self.bool_t, None, v, lo).map_err(be)?;
            let past = self.or(above, below)?;
            self.if_then(past, |e| {
                let word = e.c_u32(j as u32);
                let one = e.scalar(Scalar::I32(1));
                e.store_elem(cx, out, word, one)
            })?;
        }
        Ok(())
    }

    /// Packs the integers `arg` (within ±127, but see `range`) of an `r×c` matrix
    /// (push constants 1 and 2; 3 the words to a line) four to an i32 word of `out`
    /// as 8-bit two's complement, one word per element of the grid-stride share
    /// (push constant 0 counts them, padding lines included), 0 past the matrix:
    /// along its rows (byte `j` of word `i·w+q` the element `(i, 4q+j)`) or, with
    /// `cols`, down its columns (the element `(4q+j, i)`; the lines whole eights
    /// and `w` whole fours).
    ///
    /// With `range` (a binding and limits), word `j` of that binding is set where an
    /// element is past `limits[j]` in magnitude (`flag_past`), before it is narrowed.
    /// With `slice`, each element's high or low 8-bit slice is packed (`slice_i8`).
    pub(super) fn pack_i8_kernel(
        &mut self,
        cx: &mut Cx,
        arg: &KExpr,
        out: u32,
        range: Option<&(u32, Vec<u32>)>,
        slice: Option<bool>,
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
        // Down columns, each 32 invocations in a row pack words `q..q+3` of lines
        // `i..i+7` (lines are whole eights and `w` whole fours: `CoopTile`'s
        // multiples of 16 bytes), so that each of a word's reads takes 32 bytes
        // of each of four rows and its stores 16 bytes of each of eight lines.
        let eighths = {
            let lines = self.b.u_div(u, None, cx.n, w).map_err(be)?;
            let eight = self.c_u32(8);
            self.b.u_div(u, None, lines, eight).map_err(be)?
        };
        let per = |e: &mut Self, cx: &Cx, wi: Word| -> R<()> {
            let (line, q, at_word) = if cols {
                let (c3, c5, c7) = (e.c_u32(3), e.c_u32(5), e.c_u32(7));
                let c31 = e.c_u32(31);
                let sub = e.b.bitwise_and(u, None, wi, c31).map_err(be)?;
                let blk = e.b.shift_right_logical(u, None, wi, c5).map_err(be)?;
                let l8 = e.b.u_mod(u, None, blk, eighths).map_err(be)?;
                let q4 = e.b.u_div(u, None, blk, eighths).map_err(be)?;
                let l8 = e.b.shift_left_logical(u, None, l8, c3).map_err(be)?;
                let l1 = e.b.bitwise_and(u, None, sub, c7).map_err(be)?;
                let line = e.b.bitwise_or(u, None, l8, l1).map_err(be)?;
                let two = e.c_u32(2);
                let q4 = e.b.shift_left_logical(u, None, q4, two).map_err(be)?;
                let q1 = e.b.shift_right_logical(u, None, sub, c3).map_err(be)?;
                let q = e.b.bitwise_or(u, None, q4, q1).map_err(be)?;
                let at = e.umul(line, w)?;
                (line, q, e.uadd(at, q)?)
            } else {
                let line = e.b.u_div(u, None, wi, w).map_err(be)?;
                let q = e.b.u_mod(u, None, wi, w).map_err(be)?;
                (line, q, wi)
            };
            let four = e.c_u32(4);
            let first = e.umul(q, four)?;
            // The line within the matrix (a row, or a column), and each byte's
            // place along it within the matrix's other length.
            let (line_len, along_len) = if cols { (c, r) } else { (r, c) };
            let in_line = e.ult(line, line_len)?;
            let mut word = e.scalar(Scalar::I32(0));
            for j in 0..4u32 {
                let dj = e.c_u32(j);
                let pos = e.uadd(first, dj)?;
                let in_pos = e.ult(pos, along_len)?;
                let inside =
                    e.b.logical_and(e.bool_t, None, in_line, in_pos)
                        .map_err(be)?;
                let z = e.scalar(Scalar::I32(0));
                e.store(byte, z)?;
                e.if_then(inside, |e| {
                    let at = if cols {
                        let row = e.umul(pos, c)?;
                        e.uadd(row, line)?
                    } else {
                        let row = e.umul(line, c)?;
                        e.uadd(row, pos)?
                    };
                    let v = e.expr(cx, arg, Ix::flat(at))?;
                    if let Some((flags, limits)) = range {
                        e.flag_past(cx, (v, arg.elem()), limits, *flags)?;
                    }
                    let v = e.convert(v, arg.elem(), ElemType::I32)?;
                    let v = match slice {
                        None => v,
                        Some(high) => e.slice_i8(v, high)?,
                    };
                    e.store(byte, v)
                })?;
                let v = e.load(it, byte)?;
                let mask = e.scalar(Scalar::I32(255));
                let v = e.b.bitwise_and(it, None, v, mask).map_err(be)?;
                let sh = e.c_u32(8 * j);
                let v = e.b.shift_left_logical(it, None, v, sh).map_err(be)?;
                word = e.b.bitwise_or(it, None, word, v).map_err(be)?;
            }
            e.store_elem(cx, out, at_word, word)
        };
        self.unrolled_share(cx, &per, i, trip)
    }
}
