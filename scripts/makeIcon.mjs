// Renders the extension's 128×128 marketplace icon (media/icon.png) from the activity-bar mark
// (media/evalRunner.svg) in headless Chromium: run it again after changing the mark.
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const mark = readFileSync('media/evalRunner.svg', 'utf8').replace(/currentColor/g, '#ffffff');
const page = `<!doctype html><html><body style="margin:0;background:transparent">
<div style="width:128px;height:128px;border-radius:24px;background:linear-gradient(135deg,#1f6feb,#0b3d91);display:flex;align-items:center;justify-content:center">
<div style="width:92px;height:92px">${mark.replace('width="24" height="24"', 'width="92" height="92"')}</div></div></body></html>`;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium' });
try {
  const tab = await browser.newPage({ viewport: { width: 128, height: 128 } });
  await tab.setContent(page);
  await tab.screenshot({ path: 'media/icon.png', omitBackground: true });
} finally {
  await browser.close();
}
console.log('media/icon.png written');
