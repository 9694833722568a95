import Foundation
import HTTPTypes
import Hummingbird
import Mustache

/// The operator console's pages (server-rendered HTML, no script): sign in with a password and
/// a TOTP code; find an account; its page with every action an operator's role allows (each with
/// a required reason); the outbox; client records and their import; the audit trail.
package enum OperatorPage {
    package static let style = ConsolePage.style + """
        main { max-width: 76rem; }
        td { overflow-wrap: anywhere; }
        nav a { margin-right: 1rem; }
        .lock { background: #fde8e7; padding: .6rem .8rem; border-radius: 8px; }
        .done { background: #e7f6ea; padding: .6rem .8rem; border-radius: 8px; }
        dl { display: grid; grid-template-columns: 12rem 1fr; gap: .3rem .8rem; margin: 0; }
        dt { color: #555; } dd { margin: 0; }
        details { margin-top: .6rem; } summary { cursor: pointer; }
        textarea { width: 100%; box-sizing: border-box; font: inherit; border: 1px solid #ccc; border-radius: 8px; padding: .5rem; }
        select { font: inherit; padding: .4rem; border-radius: 8px; }
        .filters { display: grid; grid-template-columns: repeat(3, 1fr); gap: 0 1rem; }
        """

    package static let template: MustacheTemplate = try! MustacheTemplate(string: PageLayout.page(
        lang: "en", title: "{{title}} · Gatehouse operators", style: style, body: """
        <header><h1>Gatehouse · operators</h1>{{#signedIn}}<nav><a href="/operator">Find</a><a href="/operator/audit">Audit</a><a href="/operator/outbox">Outbox</a><a href="/operator/clients">Client records</a></nav><form class="inline" method="post" action="/operator/logout"><input type="hidden" name="csrf" value="{{csrf}}"><span class="hint" id="who">{{signedIn}} ({{role}})</span> <button class="quiet" type="submit">Sign out</button></form>{{/signedIn}}</header>
        <main>
        {{#error}}<p class="error" id="error">{{error}}</p>{{/error}}
        {{#done}}<p class="done" id="done">{{done}}</p>{{/done}}
        {{#login}}
        <section>
        <h2>Sign in</h2>
        <form method="post" action="/operator/login">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="name">Name</label><input id="name" type="text" name="name" value="{{name}}" autocomplete="username" required>
        <label for="password">Password</label><input id="password" type="password" name="password" autocomplete="current-password" required>
        <label for="code">Code from your authenticator app</label><input id="code" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,7}" required>
        <button type="submit" id="signin">Sign in</button>
        </form>
        </section>
        {{/login}}
        {{#search}}
        <section>
        <h2>Find an account</h2>
        <form method="post" action="/operator/find">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="query">Phone, email, login, @tag or id</label><input id="query" type="text" name="query" value="{{query}}" required>
        <button type="submit" id="find">Find</button>
        </form>
        </section>
        {{/search}}
        {{#account}}
        <section id="profile">
        <h2>Account {{id}}</h2>
        {{#locked}}<p class="lock" id="locked">Locked since {{lockedAt}}: {{lockedReason}}</p>{{/locked}}
        <dl>
        <dt>Name</dt><dd>{{name}}</dd>
        <dt>Login</dt><dd>{{login}}</dd>
        <dt>Email</dt><dd id="email">{{email}} {{emailState}}</dd>
        <dt>Phone</dt><dd id="phone">{{phone}} {{phoneState}}</dd>
        <dt>Language</dt><dd>{{locale}}</dd>
        <dt>Since</dt><dd>{{createdAt}}</dd>
        {{#deletion}}<dt>Deletion</dt><dd>{{deletion}}</dd>{{/deletion}}
        </dl>
        </section>
        <section id="second-factors">
        <h2>Second factors</h2>
        <p id="totp">Authenticator app: {{totp}}</p>
        <table id="passkeys">
        <tr><th>Passkey ({{passkeyCount}})</th><th>Added</th><th>Last used</th></tr>
        {{#passkeys}}<tr><td>{{name}}</td><td>{{createdAt}}</td><td>{{lastUsedAt}}</td></tr>{{/passkeys}}
        </table>
        {{#mayAct}}{{#hasSecondFactors}}
        <form method="post" action="/operator/accounts/{{id}}/remove-second-factors"><input type="hidden" name="csrf" value="{{csrf}}">
        <label for="factors-reason">Reason to turn the authenticator app off and remove every passkey (and how the person proved who they are)</label><input id="factors-reason" type="text" name="reason" maxlength="500" required>
        <button type="submit" id="remove-factors">Remove every second factor</button></form>
        {{/hasSecondFactors}}{{/mayAct}}
        </section>
        <section id="sessions">
        <h2>Sessions ({{sessionCount}})</h2>
        <table>
        <tr><th>Device</th><th>Address</th><th>Opened</th><th>Last used</th></tr>
        {{#sessions}}<tr><td>{{device}}</td><td>{{ip}}</td><td>{{createdAt}}</td><td>{{lastUsedAt}}</td></tr>{{/sessions}}
        </table>
        {{#mayAct}}
        <form method="post" action="/operator/accounts/{{id}}/revoke-sessions"><input type="hidden" name="csrf" value="{{csrf}}">
        <label for="revoke-reason">Reason</label><input id="revoke-reason" type="text" name="reason" maxlength="500" required>
        <button type="submit" id="revoke">End every session</button></form>
        {{/mayAct}}
        </section>
        {{#mayAct}}
        <section id="actions">
        <h2>Help</h2>
        {{#locked}}
        <form method="post" action="/operator/accounts/{{id}}/unlock"><input type="hidden" name="csrf" value="{{csrf}}">
        <label for="unlock-reason">Reason to unlock</label><input id="unlock-reason" type="text" name="reason" maxlength="500" required>
        <button type="submit" id="unlock">Unlock</button></form>
        {{/locked}}
        {{^locked}}
        <form method="post" action="/operator/accounts/{{id}}/lock"><input type="hidden" name="csrf" value="{{csrf}}">
        <label for="lock-reason">Reason to lock (their sessions end; no sign-in works)</label><input id="lock-reason" type="text" name="reason" maxlength="500" required>
        <button type="submit" id="lock">Lock</button></form>
        {{/locked}}
        {{#canResend}}
        <form method="post" action="/operator/accounts/{{id}}/resend-confirmation"><input type="hidden" name="csrf" value="{{csrf}}">
        <label for="resend-reason">Reason to send the confirmation link again</label><input id="resend-reason" type="text" name="reason" maxlength="500" required>
        <button type="submit" id="resend">Send the confirmation link</button></form>
        {{/canResend}}
        {{#recoveryTo}}
        <form method="post" action="/operator/accounts/{{id}}/send-recovery-code"><input type="hidden" name="csrf" value="{{csrf}}">
        <label for="recovery-reason">Reason to send a recovery code to {{recoveryTo}} (they set the password themselves)</label><input id="recovery-reason" type="text" name="reason" maxlength="500" required>
        <button type="submit" id="recovery">Send a recovery code</button></form>
        {{/recoveryTo}}
        </section>
        {{/mayAct}}
        <section id="client">
        <h2>Client record</h2>
        {{#client}}
        <dl><dt>Phone</dt><dd>{{phone}}</dd><dt>Name</dt><dd>{{name}}</dd><dt>Room</dt><dd>{{room}}</dd><dt>Base</dt><dd>{{base}}</dd><dt>Partner zones</dt><dd>{{parts}}</dd></dl>
        {{#mayAct}}
        <form method="post" action="/operator/accounts/{{id}}/unbind-client"><input type="hidden" name="csrf" value="{{csrf}}">
        <label for="unbind-reason">Reason to unbind it (it is never bound to this account again)</label><input id="unbind-reason" type="text" name="reason" maxlength="500" required>
        <button type="submit" id="unbind">Unbind</button></form>
        {{/mayAct}}
        {{/client}}
        {{^client}}<p class="hint">None bound.</p>{{/client}}
        </section>
        <section id="wallet">
        <h2>Wallet</h2>
        {{#wallet}}
        <p>Balance <strong id="balance">{{balance}}</strong></p>
        <table id="movements">
        <tr><th>When</th><th>Kind</th><th>Amount</th><th>Comment</th><th>Balance after</th><th></th></tr>
        {{#movements}}<tr data-transfer="{{id}}"><td>{{createdAt}}</td><td>{{kind}}</td><td>{{amount}}</td><td>{{comment}}</td><td>{{balanceAfter}}</td>
        <td>{{#reversible}}<form method="post" action="/operator/accounts/{{owner}}/reverse"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="transfer" value="{{id}}"><input type="text" name="reason" maxlength="500" placeholder="Reason" required> <button class="quiet" type="submit">Reverse</button></form>{{/reversible}}</td></tr>{{/movements}}
        </table>
        {{#mayCredit}}
        <form method="post" action="/operator/accounts/{{id}}/credit"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="reference" value="{{reference}}">
        <label for="amount">Credit (roubles)</label><input id="amount" type="text" name="amount" inputmode="decimal" placeholder="500.00" required>
        <label for="credit-reason">Reason (the person sees it in their history)</label><input id="credit-reason" type="text" name="reason" maxlength="500" required>
        <button type="submit" id="credit">Credit</button></form>
        {{/mayCredit}}
        {{/wallet}}
        {{^wallet}}<p class="hint">No wallet.</p>{{/wallet}}
        </section>
        <section id="signatures">
        <h2>Sign To Login</h2>
        {{#hasEnrolments}}<table><tr><th>Device</th><th>App</th><th>Since</th><th>Address proven</th></tr>{{#enrolments}}<tr><td>{{deviceClass}}</td><td>{{app}}</td><td>{{createdAt}}</td><td>{{proven}}</td></tr>{{/enrolments}}</table>{{/hasEnrolments}}
        {{^hasEnrolments}}<p class="hint">No signature enrolled.</p>{{/hasEnrolments}}
        {{#hasApps}}<h3>Apps they develop</h3><table><tr><th>Name</th><th>Bundle ID</th><th>State</th></tr>{{#apps}}<tr><td>{{name}}</td><td>{{bundleId}}</td><td>{{state}}</td></tr>{{/apps}}</table>{{/hasApps}}
        </section>
        <section id="events">
        <h2>Latest events</h2>
        <table><tr><th>When</th><th>What</th><th>Who</th><th>From</th><th>Detail</th></tr>
        {{#events}}<tr><td>{{at}}</td><td>{{kind}}</td><td>{{actor}}</td><td>{{ip}}</td><td>{{detail}}</td></tr>{{/events}}
        </table>
        <p><a href="/operator/audit?account={{id}}">The whole trail of this account</a></p>
        </section>
        {{/account}}
        {{#audit}}
        <section>
        <h2>Audit trail</h2>
        <form method="get" action="/operator/audit" class="filters">
        <div><label for="kind">Kind</label><select id="kind" name="kind"><option value="">any</option>{{#kinds}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{value}}</option>{{/kinds}}</select></div>
        <div><label for="actorType">Actor</label><select id="actorType" name="actorType"><option value="">any</option>{{#actorTypes}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{value}}</option>{{/actorTypes}}</select></div>
        <div><label for="actor">Actor's id or name</label><input id="actor" type="text" name="actor" value="{{actor}}"></div>
        <div><label for="account">Account id</label><input id="account" type="text" name="account" value="{{accountFilter}}"></div>
        <div><label for="since">Since (yyyy-mm-dd)</label><input id="since" type="text" name="since" value="{{since}}"></div>
        <div><label for="until">Until (yyyy-mm-dd)</label><input id="until" type="text" name="until" value="{{until}}"></div>
        <div><button type="submit" id="filter">Filter</button></div>
        </form>
        <table id="trail"><tr><th>When</th><th>What</th><th>Who</th><th>Account</th><th>From</th><th>Request</th><th>Detail</th></tr>
        {{#events}}<tr><td>{{at}}</td><td>{{kind}}</td><td>{{actor}}</td><td>{{#account}}<a href="/operator/accounts/{{account}}" title="{{account}}">{{accountShort}}</a>{{/account}}</td><td>{{ip}}</td><td>{{requestId}}</td><td>{{detail}}</td></tr>{{/events}}
        </table>
        {{#next}}<p><a id="older" href="{{next}}">Older</a></p>{{/next}}
        </section>
        {{/audit}}
        {{#outbox}}
        <section>
        <h2>Outbox</h2>
        <form method="post" action="/operator/outbox/find"><input type="hidden" name="csrf" value="{{csrf}}">
        <label for="address">What was sent to (an email or a phone)</label><input id="address" type="text" name="address" value="{{address}}">
        <button type="submit" id="outbox-find">Show</button></form>
        <p class="hint">Bodies and codes are never shown here.</p>
        <table id="messages"><tr><th>Queued</th><th>To</th><th>Subject</th><th>State</th><th>Attempts</th><th>Last error</th><th>Sent</th><th></th></tr>
        {{#messages}}<tr data-message="{{id}}"><td>{{createdAt}}</td><td>{{to}}</td><td>{{subject}}</td><td>{{status}}</td><td>{{attempts}}</td><td>{{lastError}}</td><td>{{sentAt}}</td>
        <td>{{#retry}}<form method="post" action="/operator/outbox/{{id}}/retry"><input type="hidden" name="csrf" value="{{csrf}}"><input type="text" name="reason" maxlength="500" placeholder="Reason" required> <button class="quiet" type="submit">Retry</button></form>{{/retry}}</td></tr>{{/messages}}
        </table>
        </section>
        {{/outbox}}
        {{#clients}}
        <section>
        <h2>Client records</h2>
        <form method="post" action="/operator/clients/find"><input type="hidden" name="csrf" value="{{csrf}}">
        <label for="client-phone">Phone</label><input id="client-phone" type="text" name="phone" value="{{phone}}" required>
        <button type="submit" id="client-find">Find</button></form>
        {{#record}}<dl id="record"><dt>Phone</dt><dd>{{phone}}</dd><dt>Name</dt><dd>{{name}}</dd><dt>Email</dt><dd>{{email}}</dd><dt>Birthday</dt><dd>{{birthday}}</dd><dt>Room</dt><dd>{{room}}</dd><dt>Base</dt><dd>{{base}}</dd><dt>Partner zones</dt><dd>{{parts}}</dd><dt>Bound to</dt><dd>{{#account}}<a href="/operator/accounts/{{account}}">{{account}}</a>{{/account}}{{^account}}nobody{{/account}}</dd></dl>{{/record}}
        {{#notFound}}<p class="hint">No client record has this phone.</p>{{/notFound}}
        </section>
        {{#mayImport}}
        <section>
        <h2>Import</h2>
        {{#report}}
        <div id="report">
        <p>{{#applied}}Imported{{/applied}}{{^applied}}Preview: importing this file would make{{/applied}} <strong>{{created}}</strong> new, <strong>{{updated}}</strong> changed, <strong>{{unchanged}}</strong> unchanged; <strong>{{refusedCount}}</strong> refused.</p>
        {{#hasRefusals}}<table id="refusals"><tr><th>Line</th><th>Why</th></tr>{{#refused}}<tr><td>{{line}}</td><td>{{reason}}</td></tr>{{/refused}}</table>{{/hasRefusals}}
        {{^applied}}<form method="post" action="/operator/clients/import"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="format" value="{{format}}"><input type="hidden" name="apply" value="1"><input type="hidden" name="carried" value="{{carried}}"><button type="submit" id="apply">Apply this import</button></form>{{/applied}}
        </div>
        {{/report}}
        <form method="post" action="/operator/clients/import" enctype="multipart/form-data"><input type="hidden" name="csrf" value="{{csrf}}">
        <label for="clients-file">A file: JSON lines, or CSV with a header row</label><input id="clients-file" type="file" name="file" accept=".jsonl,.csv,.txt,text/csv,application/x-ndjson">
        <button type="submit" id="preview">Preview</button></form>
        </section>
        {{/mayImport}}
        {{/clients}}
        </main>
        """))

    /// Only the inline style and forms posting here: no script, no image, no frame.
    package static let headers = PageForm.headers(style: style, images: false, referrer: "no-referrer")

    package static func render(_ values: [String: Any], status: HTTPResponse.Status = .ok, cookies: [String] = []) -> Response {
        PageForm.response(template.render(values), headers: headers, status: status, cookies: cookies)
    }
}
