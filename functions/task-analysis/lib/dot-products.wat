;; Dot products of float64 vectors with 128-bit SIMD: the similarity kernel of clustering.ts.
;;
;; Source of dot-products.wasm (`npm run build:wasm` assembles it; a unit test checks that the
;; committed binary is exactly this source assembled). Plain SIMD128 only: every operation is IEEE
;; float64 arithmetic, so the results are the same on every engine and CPU.
;;
;; Layout (written by dot-products.ts): the vectors in blocks of 3, each block stored pair-interleaved:
;; for dimensions k, k+1 (k even), the 6 doubles row0[k], row0[k+1], row1[k], row1[k+1], row2[k],
;; row2[k+1]. Dimensions are padded with zeros to an even count, rows to a multiple of 3.
;;
;; Summation order: each dot product keeps two float64 lanes, lane 0 summing the products of the even
;; dimensions in ascending order and lane 1 those of the odd dimensions, and returns lane 0 + lane 1.
(module
  (import "env" "memory" (memory 1))

  ;; Rows 3·block .. 3·block+2 against every row from 3·block on: each 3 × 3 tile of the upper block
  ;; triangle, as out[i·n + j] (float64, row-major, n × n; entries past row or column n − 1 skipped).
  ;; One call per row block keeps each call short, so the engine's optimising tier takes over after
  ;; the first few blocks (WebAssembly has no on-stack replacement).
  (func (export "rowBlock") (param $tiles i32) (param $span i32) (param $n i32) (param $out i32) (param $block i32)
    (local $blocks i32) (local $column i32) (local $a i32) (local $b i32) (local $end i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $x v128)
    (local $s00 v128) (local $s01 v128) (local $s02 v128)
    (local $s10 v128) (local $s11 v128) (local $s12 v128)
    (local $s20 v128) (local $s21 v128) (local $s22 v128)
    (local.set $blocks (i32.div_u (i32.add (local.get $n) (i32.const 2)) (i32.const 3)))
    (local.set $column (local.get $block))
    (loop $columns
      (local.set $a (i32.add (local.get $tiles) (i32.mul (local.get $block) (local.get $span))))
      (local.set $b (i32.add (local.get $tiles) (i32.mul (local.get $column) (local.get $span))))
      (local.set $end (i32.add (local.get $a) (local.get $span)))
      (local.set $s00 (v128.const f64x2 0 0)) (local.set $s01 (v128.const f64x2 0 0)) (local.set $s02 (v128.const f64x2 0 0))
      (local.set $s10 (v128.const f64x2 0 0)) (local.set $s11 (v128.const f64x2 0 0)) (local.set $s12 (v128.const f64x2 0 0))
      (local.set $s20 (v128.const f64x2 0 0)) (local.set $s21 (v128.const f64x2 0 0)) (local.set $s22 (v128.const f64x2 0 0))
      ;; 3 + 3 loads feed 9 multiply-adds of two lanes each.
      (loop $dimensions
        (local.set $a0 (v128.load offset=0 (local.get $a)))
        (local.set $a1 (v128.load offset=16 (local.get $a)))
        (local.set $a2 (v128.load offset=32 (local.get $a)))
        (local.set $x (v128.load offset=0 (local.get $b)))
        (local.set $s00 (f64x2.add (local.get $s00) (f64x2.mul (local.get $a0) (local.get $x))))
        (local.set $s10 (f64x2.add (local.get $s10) (f64x2.mul (local.get $a1) (local.get $x))))
        (local.set $s20 (f64x2.add (local.get $s20) (f64x2.mul (local.get $a2) (local.get $x))))
        (local.set $x (v128.load offset=16 (local.get $b)))
        (local.set $s01 (f64x2.add (local.get $s01) (f64x2.mul (local.get $a0) (local.get $x))))
        (local.set $s11 (f64x2.add (local.get $s11) (f64x2.mul (local.get $a1) (local.get $x))))
        (local.set $s21 (f64x2.add (local.get $s21) (f64x2.mul (local.get $a2) (local.get $x))))
        (local.set $x (v128.load offset=32 (local.get $b)))
        (local.set $s02 (f64x2.add (local.get $s02) (f64x2.mul (local.get $a0) (local.get $x))))
        (local.set $s12 (f64x2.add (local.get $s12) (f64x2.mul (local.get $a1) (local.get $x))))
        (local.set $s22 (f64x2.add (local.get $s22) (f64x2.mul (local.get $a2) (local.get $x))))
        (local.set $a (i32.add (local.get $a) (i32.const 48)))
        (local.set $b (i32.add (local.get $b) (i32.const 48)))
        (br_if $dimensions (i32.lt_u (local.get $a) (local.get $end))))
      (call $store (local.get $out) (local.get $n) (local.get $block) (local.get $column) (i32.const 0) (i32.const 0) (local.get $s00))
      (call $store (local.get $out) (local.get $n) (local.get $block) (local.get $column) (i32.const 0) (i32.const 1) (local.get $s01))
      (call $store (local.get $out) (local.get $n) (local.get $block) (local.get $column) (i32.const 0) (i32.const 2) (local.get $s02))
      (call $store (local.get $out) (local.get $n) (local.get $block) (local.get $column) (i32.const 1) (i32.const 0) (local.get $s10))
      (call $store (local.get $out) (local.get $n) (local.get $block) (local.get $column) (i32.const 1) (i32.const 1) (local.get $s11))
      (call $store (local.get $out) (local.get $n) (local.get $block) (local.get $column) (i32.const 1) (i32.const 2) (local.get $s12))
      (call $store (local.get $out) (local.get $n) (local.get $block) (local.get $column) (i32.const 2) (i32.const 0) (local.get $s20))
      (call $store (local.get $out) (local.get $n) (local.get $block) (local.get $column) (i32.const 2) (i32.const 1) (local.get $s21))
      (call $store (local.get $out) (local.get $n) (local.get $block) (local.get $column) (i32.const 2) (i32.const 2) (local.get $s22))
      (local.set $column (i32.add (local.get $column) (i32.const 1)))
      (br_if $columns (i32.lt_u (local.get $column) (local.get $blocks)))))

  ;; out[i·n + j] = lane 0 + lane 1 of $sum, for i = 3·block + r and j = 3·column + c, when both are < n.
  (func $store (param $out i32) (param $n i32) (param $block i32) (param $column i32) (param $r i32) (param $c i32) (param $sum v128)
    (local $i i32) (local $j i32)
    (local.set $i (i32.add (i32.mul (local.get $block) (i32.const 3)) (local.get $r)))
    (local.set $j (i32.add (i32.mul (local.get $column) (i32.const 3)) (local.get $c)))
    (if (i32.and (i32.lt_u (local.get $i) (local.get $n)) (i32.lt_u (local.get $j) (local.get $n)))
      (then
        (f64.store
          (i32.add (local.get $out) (i32.shl (i32.add (i32.mul (local.get $i) (local.get $n)) (local.get $j)) (i32.const 3)))
          (f64.add (f64x2.extract_lane 0 (local.get $sum)) (f64x2.extract_lane 1 (local.get $sum))))))))
