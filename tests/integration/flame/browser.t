#!/bin/sh
# The flame graph in a real browser: headless Chromium driven by
# playwright-core. The page loads without script errors, a click zooms the
# frame to the full width, a search (button and Ctrl-F) reports the right
# matched percentage, zoom and search survive a reload, and a screenshot is
# left in the build output.
. "$SIDESCOPE_SRC/tests/lib/tap.sh"
require_cmd node xmllint
[ -x /usr/bin/chromium ] || skip_all "needs Debian's chromium"
modules=$SIDESCOPE_SRC/tests/js/node_modules
[ -d "$modules/playwright-core" ] || skip_all "needs playwright-core (cd tests/js && npm ci)"

shots=$SIDESCOPE_BUILD/tests/flame
mkdir -p "$shots"
svg=$TMPDIR_TEST/browser.svg
"$SIDESCOPE" flame "$SIDESCOPE_SRC/tests/data/flame/browser.folded" -o "$svg" \
	--title "Browser test" --subtitle "five stacks"
ok $? "flame graph written"
xmllint --noout "$svg"
ok $? "well-formed XML"

printf 'main;a 50\nmain;b;c 30\nmain;d 20\n' > "$TMPDIR_TEST/before.folded"
printf 'main;a 80\nmain;b;c 30\nmain;d 10\n' > "$TMPDIR_TEST/after.folded"
"$SIDESCOPE" flame --diff "$TMPDIR_TEST/before.folded" "$TMPDIR_TEST/after.folded" \
	-o "$TMPDIR_TEST/diff.svg"
ok $? "differential flame graph written"
"$SIDESCOPE" flame --inverted "$SIDESCOPE_SRC/tests/data/flame/browser.folded" \
	-o "$TMPDIR_TEST/icicle.svg"
ok $? "icicle graph written"

cat > "$TMPDIR_TEST/check.js" <<'JS'
'use strict';
const { chromium } = require('playwright-core');
const [svg, profile, shot] = process.argv.slice(2);
let n = 0, failed = 0;
function ok(cond, what, extra) {
	n++;
	console.log((cond ? 'ok ' : 'not ok ') + n + ' - ' + what);
	if (!cond) {
		failed++;
		if (extra !== undefined)
			console.log('# got: ' + JSON.stringify(extra));
	}
}
async function frameBox(page, name) {
	const i = await page.evaluate((nm) =>
		window.flamegraph.frames.findIndex((f) => f.name === nm), name);
	const r = page.locator('#frames > g').nth(i).locator('rect');
	return { i, r, box: await r.boundingBox() };
}
(async () => {
	const errors = [];
	const ctx = await chromium.launchPersistentContext(profile, {
		executablePath: '/usr/bin/chromium', headless: true,
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
		       '--no-first-run', '--disable-background-networking',
		       '--disable-component-update', '--disable-sync'],
	});
	const requests = [];
	ctx.on('request', (r) => { if (!r.url().startsWith('file:')) requests.push(r.url()); });
	try {
		const page = await ctx.newPage();
		page.on('pageerror', (e) => errors.push(e.message));
		page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
		let answer = '';
		page.on('dialog', (d) => d.accept(answer));
		await page.goto('file://' + svg);
		ok(await page.evaluate(() => !!window.flamegraph), 'script ran');
		ok(errors.length === 0, 'no script errors on load', errors);
		const W = await page.evaluate(() => +document.documentElement.getAttribute('width'));

		// hover shows name, samples and both percentages
		let f = await frameBox(page, 'render');
		await page.mouse.move(f.box.x + f.box.width / 2, f.box.y + f.box.height / 2);
		const details = await page.locator('#details').textContent();
		ok(details === 'render (60 samples, 60.00% of total, 66.67% of parent)',
		   'hover details', details);

		// click zooms: render fills the width, its child draw scales with it
		await page.mouse.click(f.box.x + f.box.width / 2, f.box.y + f.box.height / 2);
		f = await frameBox(page, 'render');
		ok(Math.abs(f.box.x - 10) < 0.6 && Math.abs(f.box.width - (W - 20)) < 0.6,
		   'zoomed frame fills the width', f.box);
		const draw = await frameBox(page, 'draw');
		ok(Math.abs(draw.box.width - (W - 20) * 50 / 60) < 0.6, 'child scaled', draw.box);
		const lex = await frameBox(page, 'lex');
		ok(!(await lex.r.isVisible()), 'frames outside the zoom hidden', lex.box);
		ok(await page.locator('#reset').isVisible(), 'reset button shown');
		ok(/#z=\d+/.test(page.url()), 'zoom in the URL fragment', page.url());

		// search from the button: parse (30) + parse_css (10) = 40%
		answer = 'parse';
		await page.locator('#search').click();
		let matched = await page.locator('#matched').textContent();
		ok(matched === 'Matched: 40.00%', 'search by button: matched %', matched);
		const hl = await page.evaluate(() => window.flamegraph.frames
			.filter((x) => x.m).map((x) => x.name).sort().join(','));
		ok(hl === 'parse,parse_css', 'matches highlighted', hl);

		// reload keeps zoom and search
		await page.reload();
		matched = await page.locator('#matched').textContent();
		ok(matched === 'Matched: 40.00%', 'search survives reload', matched);
		f = await frameBox(page, 'render');
		ok(Math.abs(f.box.width - (W - 20)) < 0.6, 'zoom survives reload', f.box);
		await page.screenshot({ path: shot });

		// Ctrl-F: clears nothing, asks again; an anchored regex
		answer = '^(lex|tokenize)$';
		await page.locator('#reset').click();
		f = await frameBox(page, 'main');
		ok(Math.abs(f.box.width - (W - 20) * 90 / 100) < 0.6, 'reset zoom', f.box);
		await page.keyboard.press('Control+f');
		matched = await page.locator('#matched').textContent();
		ok(matched === 'Matched: 30.00%', 'Ctrl-F search: matched %', matched);

		// icicle: the same zoom with the root at the top
		await page.goto('file://' + svg.replace(/browser\.svg$/, 'icicle.svg'));
		f = await frameBox(page, 'render');
		const root = await frameBox(page, 'all');
		ok(root.box.y < f.box.y, 'icicle: root above its callees');
		await page.mouse.click(f.box.x + 2, f.box.y + 2);
		f = await frameBox(page, 'render');
		ok(Math.abs(f.box.width - (W - 20)) < 0.6, 'icicle: click zooms', f.box);

		// differential: hover tells before, after and delta
		await page.goto('file://' + svg.replace(/browser\.svg$/, 'diff.svg'));
		f = await frameBox(page, 'a');
		await page.mouse.move(f.box.x + 5, f.box.y + 5);
		const dd = await page.locator('#details').textContent();
		ok(/before 50, after 80, delta \+30/.test(dd), 'diff hover: before, after, delta', dd);
		await page.screenshot({ path: shot.replace(/\.png$/, '-diff.png') });
		ok(errors.length === 0, 'no script errors at all', errors);
		ok(requests.length === 0, 'no network requests', requests);
	} finally {
		await ctx.close();
	}
	console.log('1..' + n);
	process.exit(failed ? 1 : 0);
})().catch((e) => { console.log('not ok - ' + e.message); console.log('1..0'); process.exit(1); });
JS

# node's own TAP goes after ours: renumber by passing its lines through
out=$(cd "$TMPDIR_TEST" && NODE_PATH=$modules timeout 120 node check.js "$svg" \
	"$TMPDIR_TEST/chromium-profile" "$shots/flame-browser.png" 2>&1)
rc=$?
printf '%s\n' "$out" | while IFS= read -r line; do
	case $line in
	"ok "*|"not ok "*|"#"*) printf '%s\n' "$line" ;;
	esac
done > "$TMPDIR_TEST/node.tap"
while IFS= read -r line; do
	case $line in
	"ok "*) pass "${line#ok * - }" ;;
	"not ok "*) fail "${line#not ok * - }" ;;
	"#"*) printf '%s\n' "$line" ;;
	esac
done < "$TMPDIR_TEST/node.tap"
ok "$rc" "browser checks ran to the end"
[ "$rc" -eq 0 ] || diag "$out"
[ -s "$shots/flame-browser.png" ]
ok $? "screenshot saved in $shots"
done_testing
