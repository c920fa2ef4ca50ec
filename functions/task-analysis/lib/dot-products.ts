/**
 * All pairwise dot products of a set of vectors, computed by the WebAssembly SIMD kernel in
 * dot-products.wat (imported as a compiled module: Workers compile WebAssembly only from modules
 * bundled with the worker, never from bytes at run time).
 *
 * Each dot product is summed in float64 in the kernel's fixed order: the sum of the products of the
 * even dimensions in ascending order, plus the sum of those of the odd dimensions in ascending order.
 * Products of float32 components are exact in float64, so this differs from a plain sequential sum
 * only by the rounding of the additions (each within d · 2⁻⁵³ · Σ|aₖbₖ| of the exact dot product).
 */
/// <reference path="./wasm.d.ts" />
import kernel from './dot-products.wasm';

/** Rows per block of the kernel's layout (and per side of its register tile). */
const TILE = 3;
const BYTES_PER_DOUBLE = 8;
const WASM_PAGE_BYTES = 65_536;

interface Kernel {
  rowBlock(tiles: number, span: number, n: number, out: number, block: number): void;
}

/** The matrix of dot products, and as much free space again in the same memory. */
export interface DotProducts {
  /**
   * n × n, row-major: entries i <= j hold the dot product of vectors i and j (the diagonal included);
   * entries below the diagonal are not written (they may hold anything).
   */
  matrix: Float64Array;
  /** n × n doubles of scratch space (where the kernel's copy of the vectors was). */
  scratch: Float64Array;
}

/**
 * The dot products of every pair of `vectors` (equal dimensions, finite components; throws RangeError
 * otherwise). Memory: the n × n matrix plus the larger of an n × n scratch matrix and a float64 copy
 * of the vectors, in one WebAssembly memory that lives as long as the returned arrays.
 */
export function dotProducts(vectors: Float32Array[]): DotProducts {
  const n = vectors.length;
  const d = vectors[0]?.length ?? 0;
  // An even number of dimensions, at least 2 (zero padding), for the kernel's two lanes.
  const width = Math.max(2, d + (d % 2));
  const blocks = Math.ceil(n / TILE);
  const span = TILE * width;
  // [ tiles, later scratch | matrix ]: the copy of the vectors is dead once the matrix is computed.
  const matrixStart = Math.max(blocks * span, n * n);
  const bytes = (matrixStart + n * n) * BYTES_PER_DOUBLE;
  const pages = Math.max(1, Math.ceil(bytes / WASM_PAGE_BYTES));
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  const heap = new Float64Array(memory.buffer);
  interleave(vectors, d, width, heap);
  const { rowBlock } = new WebAssembly.Instance(kernel, { env: { memory } }).exports as unknown as Kernel;
  // One short call per row block, so the engine's optimising tier takes over after the first few.
  for (let block = 0; block < blocks; block++) rowBlock(0, span * BYTES_PER_DOUBLE, n, matrixStart * BYTES_PER_DOUBLE, block);
  return { matrix: heap.subarray(matrixStart, matrixStart + n * n), scratch: heap.subarray(0, n * n) };
}

/**
 * Writes the vectors in the kernel's layout (blocks of TILE rows; within a block, for each pair of
 * dimensions k, k + 1, each row's two components in turn) into a zeroed `heap`, checking each.
 */
function interleave(vectors: Float32Array[], d: number, width: number, heap: Float64Array): void {
  for (let i = 0; i < vectors.length; i++) {
    const vector = vectors[i]!;
    if (vector.length !== d) throw new RangeError(`vector ${i} has ${vector.length} dimensions, expected ${d}`);
    const row = i % TILE;
    let at = (i - row) * width + 2 * row;
    let finite = 0;
    for (let k = 0; k < d; k += 2, at += 2 * TILE) {
      const x = vector[k]!;
      const y = k + 1 < d ? vector[k + 1]! : 0;
      finite += x - x + (y - y); // NaN as soon as one component is NaN or infinite
      heap[at] = x;
      heap[at + 1] = y;
    }
    if (finite !== 0) throw new RangeError(`vector ${i} has a non-finite component`);
  }
}
