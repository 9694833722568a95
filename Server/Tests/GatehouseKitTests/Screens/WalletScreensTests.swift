import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GatehouseAPI
import GatehouseKit
import GatehouseScreens
import GatehouseTestSupport
import Testing

/// The wallet's screens (the wallet spec) through their view models against a live server: the
/// spec's missing guards, the forms' checks, and the dialogs' request actions.
@Suite("Wallet screens through the view models")
@MainActor
struct WalletScreensTests {
    func environment(_ server: LiveServer, accounts: AccountsClient, language: String = "en") -> WalletEnvironment {
        WalletEnvironment(accounts: MessengerEnvironment(client: accounts, localizer: Localizer(language: language), now: { [clock = server.clock] in clock.now },
                                                         tagCheckDelay: 0, device: "tests", stores: .temporary(), preferences: InMemoryPreferences()))
    }

    /// Logged in through the flow's login screen; the profile on screen.
    func loggedIn(_ server: LiveServer, as tag: String) async throws -> (WalletFlow, WalletEnvironment) {
        let env = environment(server, accounts: server.accountsClient())
        let flow = WalletFlow(environment: env)
        await flow.launch()
        guard case .login(let login) = flow.state.screen else { throw LiveServerError("expected login, got \(flow.state.screen)") }
        login.setLogin(tag)
        login.setPassword("Secret-42!")
        await login.submit()
        return (flow, env)
    }

    func profile(_ flow: WalletFlow) throws -> WalletHomeViewModel {
        guard case .home(let vm) = flow.state.screen else { throw LiveServerError("expected the profile, got \(flow.state.screen)") }
        return vm
    }

    @Test("profile → add info → add phone → attach wallet: each button only when its time has come")
    func profileSteps_areGuarded() async throws {
        try await withLiveServer { server in
            // setup
            _ = try await server.messengerUser("ann", firstName: "Ann")
            let (flow, _) = try await loggedIn(server, as: "ann")
            let home = try profile(flow)

            // validate: nothing before the profile has loaded
            #expect(!home.state.isLoaded && !home.state.isAddInfoEnabled && !home.state.isAddPhoneEnabled && !home.state.isPaymentsEnabled)
            home.payments()
            #expect(flow.state.screen == .home(home), "payments before loading does nothing")
            await home.load()
            #expect(home.state.isLoaded && home.state.login == "@ann" && home.state.isAddInfoEnabled && home.state.isAddPhoneEnabled)
            #expect(!home.state.isAttachEnabled && !home.state.isPaymentsEnabled && home.state.balance == nil)

            // add info: a bad birthday keeps Save off; a real one saves
            home.addInfo()
            guard case .addInfo(let info) = flow.state.screen else { throw LiveServerError("expected add info") }
            info.setBirthday("31.02.1990")
            #expect(info.state.birthdayError != nil && !info.state.isSaveEnabled)
            info.setBirthday("17.05.1990")
            info.setLastName("Lee")
            #expect(info.state.birthdayError == nil && info.state.isSaveEnabled)
            // and a photo from the gallery, sent on Save as the account's picture
            let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")!
            info.setPhoto(png, contentType: "image/png")
            #expect(info.state.photoBytes == png.count && info.state.isSaveEnabled)
            await info.save()
            let afterInfo = try profile(flow)
            await afterInfo.load()
            #expect(afterInfo.state.birthday == "17.05.1990" && afterInfo.state.name == "Ann Lee" && afterInfo.state.infoMessage == "Your info is saved.")
            let avatar = try #require(afterInfo.state.avatarURL, "the photo became the account's picture")
            let (bytes, response) = try await URLSessionTransport().send(URLRequest(url: server.baseURL.appendingPathComponent(avatar.path)))
            #expect(response.statusCode == 200 && !bytes.isEmpty)

            // add phone: Send needs a phone and the password; Confirm needs a sent code
            afterInfo.addPhone()
            guard case .addPhone(let phone) = flow.state.screen else { throw LiveServerError("expected add phone") }
            #expect(!phone.state.isSendEnabled && !phone.state.isConfirmEnabled && phone.state.code == nil)
            phone.setPhone("12")
            phone.setPassword("Secret-42!")
            #expect(phone.state.phoneError != nil && !phone.state.isSendEnabled)
            phone.setPhone("+7 916 123-45-67")
            #expect(phone.state.isSendEnabled)
            await phone.confirm()
            #expect(flow.state.screen == .addPhone(phone), "confirm before a code does nothing")
            await phone.sendCode()
            let code = try #require(phone.state.code)
            #expect(code.destination == "+79161234567" && code.codeLabel == "Code from the SMS" && !phone.state.isConfirmEnabled)
            phone.setCode(code.codeLength == 6 ? "000000" : "0000")
            await phone.confirm()
            #expect(phone.state.errorMessage != nil, "a wrong code is refused and the screen stays")
            phone.setCode(try await server.latestCodeV1(to: "+79161234567"))
            await phone.confirm()
            let afterPhone = try profile(flow)
            await afterPhone.load()
            #expect(afterPhone.state.isPhoneVerified && afterPhone.state.phone == "+79161234567" && afterPhone.state.isAttachEnabled && !afterPhone.state.isAddPhoneEnabled)

            // attach
            afterPhone.attachWallet()
            guard case .attachWallet(let attach) = flow.state.screen else { throw LiveServerError("expected attach") }
            #expect(attach.state.isAttachEnabled && attach.state.explanation.contains("+79161234567"))
            await attach.attach()
            let done = try profile(flow)
            await done.load()
            #expect(done.state.balance == "0.00 ₽" && done.state.isPaymentsEnabled && !done.state.isAttachEnabled)
            #expect(done.state.infoMessage == "The wallet is attached to +79161234567.")
            await flow.stopLive()
        }
    }

    @Test("delete account from the profile: refused while the wallet holds money (the server's reason shown), accepted once it is empty; login says until when")
    func deleteAccount_needsAnEmptyWallet() async throws {
        try await withLiveServer { server in
            // setup: Ann with 10 ₽ in her wallet, Bob to pay it to
            _ = try await server.walletUser("ann", phone: "+79161110001")
            let bob = try await server.walletUser("bob", phone: "+79161110002")
            try await server.credit("+79161110001", "10.00")
            let (flow, env) = try await loggedIn(server, as: "ann")
            let home = try profile(flow)
            await home.load()
            #expect(home.state.labels["deleteAccount"] == "Delete account")

            // MUT 1: money in the wallet
            home.deleteAccount()
            guard case .deleteAccount(let screen) = flow.state.screen else { throw LiveServerError("expected delete account, got \(flow.state.screen)") }
            screen.setPassword("Secret-42!")
            await screen.confirm()
            #expect(screen.state.errorMessage == "Your wallet holds 10.00 ₽: pay it out before deleting the account.", "\(String(describing: screen.state.errorMessage))")
            screen.cancel()
            #expect({ if case .home = flow.state.screen { true } else { false } }(), "cancel goes back to the profile")

            // MUT 2: paid out to Bob, then deleted
            _ = try await env.wallet.send(NewTransfer(to: PartyReference(tag: "bob"), amount: 10_00), intent: PaymentIntent())
            let reloaded = try profile(flow)
            reloaded.deleteAccount()
            #expect({ if case .home = flow.state.screen { true } else { false } }(), "nothing before the profile has loaded")
            await reloaded.load()
            reloaded.deleteAccount()
            guard case .deleteAccount(let again) = flow.state.screen else { throw LiveServerError("expected delete account") }
            again.setPassword("Secret-42!")
            await again.confirm()

            // validate
            guard case .login(let login) = flow.state.screen else { throw LiveServerError("expected login, got \(flow.state.screen)") }
            #expect(login.state.infoMessage?.hasPrefix("Your account is being deleted") == true)
            #expect(try await bob.wallet.wallet().balance == 10_00)
            await flow.stopLive()
        }
    }

    @Test("send money: the amount is checked in roubles and kopecks, the name is shown before confirming, a second tap pays once")
    func sendMoney_checksAndPaysOnce() async throws {
        try await withLiveServer { server in
            // setup
            _ = try await server.walletUser("ann", phone: "+79160000001")
            let bob = try await server.walletUser("bob", phone: "+79160000002")
            try await server.credit("+79160000001", "1000")
            let (flow, _) = try await loggedIn(server, as: "ann")
            let profile = try profile(flow)
            await profile.load()
            profile.payments()
            guard case .dialogs(let dialogs) = flow.state.screen else { throw LiveServerError("expected dialogs") }
            await dialogs.load()
            #expect(dialogs.state.balance == "1\u{202F}000.00 ₽" && dialogs.state.rows.isEmpty)
            dialogs.send()
            guard case .send(let send) = flow.state.screen else { throw LiveServerError("expected send") }
            await send.load()

            // MUT + validate: the amount
            send.setRecipient("+7 916 000-00-02")
            for (typed, problem) in [("abc", "Enter roubles"), ("1,005", "Enter roubles"), ("0", "more than zero"), ("1000,01", "Not enough money")] {
                send.setAmount(typed)
                #expect(send.state.amountError?.contains(problem) == true, "\(typed): \(send.state.amountError ?? "no error")")
                #expect(!send.state.isContinueEnabled)
            }
            send.setAmount("1 000")
            #expect(send.state.amountError == nil && send.state.isContinueEnabled)
            send.setAmount("250,5")
            send.setComment("concert")
            await send.review()
            #expect(send.state.step == .confirm && send.state.confirmText == "Send 250.50 ₽ to Bob Smith (@bob)?")
            await send.confirm()
            await send.confirm()
            #expect(send.state.step == .done && send.state.doneText == "Sent 250.50 ₽ to Bob Smith. Balance: 749.50 ₽.")
            #expect(try await bob.wallet.wallet().balance == 250_50, "paid once")

            // back to the dialogs: the payment is the dialog's last message
            send.back()
            guard case .dialogs(let after) = flow.state.screen else { throw LiveServerError("expected dialogs") }
            await after.load()
            #expect(after.state.rows.map(\.preview) == ["You sent 250.50 ₽ · concert"])
            #expect(after.state.balance == "749.50 ₽")
            // an unknown person is refused at Continue, with the server's words
            after.send()
            guard case .send(let again) = flow.state.screen else { throw LiveServerError("expected send") }
            await again.load()
            again.setRecipient("@nobody")
            again.setAmount("1")
            await again.review()
            #expect(again.state.step == .form && again.state.errorMessage == "Nobody with a wallet has this phone, tag or email.")
            await flow.stopLive()
        }
    }

    @Test("\"Top up\" is offered only when the server takes top-ups: off, the profile does not offer it and the wallet says so")
    func topUp_offeredOnlyWhenOn() async throws {
        try await withLiveServer(configure: { $0.wallet.topUps.provider = .off }) { server in
            _ = try await server.walletUser("ann", phone: "+79160000001")
            let (flow, env) = try await loggedIn(server, as: "ann")
            let profile = try profile(flow)
            await profile.load()
            #expect(profile.state.balance != nil, "the wallet is there")
            #expect(!profile.state.isTopUpEnabled)
            profile.topUp()
            guard case .home = flow.state.screen else { throw LiveServerError("top-up opened with top-ups off: \(flow.state.screen)") }
            #expect(try await env.wallet.wallet().topUps == false)
            await flow.stopLive()
        }
    }

    @Test("top up: the amount checked, the provider's page handed to the app once, paid on the (local) page: the screen says so with the balance")
    func topUp_paysOnTheProvidersPage() async throws {
        try await withLiveServer { server in
            // setup
            _ = try await server.walletUser("ann", phone: "+79160000001")
            let (flow, env) = try await loggedIn(server, as: "ann")
            var opened: [URL] = []
            flow.onOpenURL = { opened.append($0) }
            let profile = try profile(flow)
            await profile.load()
            #expect(profile.state.isTopUpEnabled)
            #expect(try await env.wallet.wallet().topUps == true)
            profile.topUp()
            guard case .topUp(let topUp) = flow.state.screen else { throw LiveServerError("expected the top-up, got \(flow.state.screen)") }

            // MUT + validate: the amount
            #expect(!topUp.state.isPayEnabled)
            topUp.setAmount("abc")
            #expect(topUp.state.amountError?.contains("Enter roubles") == true && !topUp.state.isPayEnabled)
            topUp.setAmount("500")
            #expect(topUp.state.amountError == nil && topUp.state.isPayEnabled)

            // MUT: "Pay", tapped twice
            await topUp.pay()
            await topUp.pay()
            guard case .paying(let page) = topUp.state.step else { throw LiveServerError("expected the payment page, got \(topUp.state.step)") }
            #expect(opened == [page], "the page is opened once")
            #expect(topUp.state.statusText == "Waiting for the payment of 500.00 ₽…")
            await topUp.refresh()
            #expect(topUp.state.step == .paying(page), "not paid yet")

            // MUT: the person pays on the provider's page, and comes back; "Check" is tapped while the flow's live
            // update (the `wallet.transfer` event) may be checking too
            var paidTexts: [String] = []
            let watching = topUp.observe { if $0.step == .paid { paidTexts.append($0.statusText) } }
            let paid = try await server.outbox.payLocally(page)
            async let first: Void = topUp.refresh()
            async let second: Void = topUp.refresh()
            _ = await (first, second)

            // validate: both calls return to the answer, and the screen never says "paid" without the balance
            #expect(paid == true)
            #expect(topUp.state.step == .paid && topUp.state.statusText == "The wallet is topped up with 500.00 ₽. Balance: 500.00 ₽.")
            #expect(!paidTexts.isEmpty && paidTexts.allSatisfy { $0 == "The wallet is topped up with 500.00 ₽. Balance: 500.00 ₽." }, "\(paidTexts)")
            watching.cancel()
            let history = try await env.wallet.transactions()
            #expect(history.items.map(\.kind) == [.topup] && history.items.first?.amount == 500_00)
            topUp.back()
            #expect(try self.profile(flow).state.title == "Profile")
            await flow.stopLive()
        }
    }

    @Test("a dialog's request card offers each side its own actions: pay or decline, cancel, then repay a loan")
    func dialog_requestActions() async throws {
        try await withLiveServer { server in
            // setup
            let ann = try await server.walletUser("ann", phone: "+79160000001")
            _ = try await server.walletUser("bob", phone: "+79160000002")
            try await server.credit("+79160000001", "500")
            _ = try await ann.wallet.send(NewTransfer(to: PartyReference(tag: "bob"), amount: 100_00), intent: PaymentIntent())
            let (bobFlow, _) = try await loggedIn(server, as: "bob")
            let bobHome = try profile(bobFlow)
            await bobHome.load()
            bobHome.payments()
            guard case .dialogs(let bobDialogs) = bobFlow.state.screen else { throw LiveServerError("expected dialogs") }
            await bobDialogs.load()
            #expect(bobDialogs.state.rows.map(\.preview) == ["Ann Smith sent you 100.00 ₽"] && bobDialogs.state.rows.first?.unread == true)
            bobDialogs.open(try #require(bobDialogs.state.rows.first).id)
            guard case .dialog(let bobDialog) = bobFlow.state.screen else { throw LiveServerError("expected dialog") }

            // MUT: Bob asks Ann for a loan from the dialog
            bobDialog.request()
            guard case .request(let ask) = bobFlow.state.screen else { throw LiveServerError("expected request") }
            #expect(ask.state.recipient == "@ann")
            ask.setKind(.loan)
            ask.setAmount("40")
            await ask.review()
            #expect(ask.state.confirmText == "Ask Ann Smith (@ann) for 40.00 ₽ (loan)?")
            await ask.confirm()
            #expect(ask.state.step == .done)
            ask.back()
            guard case .dialog(let bobAgain) = bobFlow.state.screen else { throw LiveServerError("expected the dialog again") }
            await bobAgain.load()
            let bobCard = try #require(bobAgain.state.items.last)
            #expect(bobCard.text == "You asked Ann Smith for 40.00 ₽ (loan)" && bobCard.requestState == "waiting" && bobCard.actions == [.cancel])

            // Ann's side: pay or decline; she pays
            let (annFlow, _) = try await loggedIn(server, as: "ann")
            let annHome = try profile(annFlow)
            await annHome.load()
            annHome.payments()
            guard case .dialogs(let annDialogs) = annFlow.state.screen else { throw LiveServerError("expected dialogs") }
            await annDialogs.load()
            annDialogs.open(try #require(annDialogs.state.rows.first).id)
            guard case .dialog(let annDialog) = annFlow.state.screen else { throw LiveServerError("expected dialog") }
            await annDialog.load()
            let annCard = try #require(annDialog.state.items.last)
            #expect(annCard.text == "Bob Smith asks you for 40.00 ₽ (loan)" && annCard.actions == [.confirm, .decline])
            await annDialog.act(.confirm, on: try #require(annCard.requestID))
            #expect(annDialog.state.infoMessage == "Paid 40.00 ₽. Balance: 360.00 ₽.")
            #expect(annDialog.state.items.first { $0.requestID == annCard.requestID }?.requestState == "paid")
            #expect(annDialog.state.items.last?.text == "You paid the request: 40.00 ₽")

            // Bob repays with one action; afterwards nobody has an action left
            await bobAgain.load()
            let paidCard = try #require(bobAgain.state.items.first { $0.requestID == annCard.requestID })
            #expect(paidCard.actions == [.repay])
            await bobAgain.act(.repay, on: try #require(paidCard.requestID))
            #expect(bobAgain.state.infoMessage == "Repaid 40.00 ₽. Balance: 100.00 ₽.")
            #expect(bobAgain.state.items.allSatisfy { $0.actions.isEmpty })
            await annDialog.load()
            #expect(annDialog.state.balance == "400.00 ₽" && annDialog.state.items.last?.text == "Bob Smith repaid the loan: 40.00 ₽")
            await bobFlow.stopLive()
            await annFlow.stopLive()
        }
    }

    @Test("live: a request made on the other side appears on my open dialog without a reload, and my payment updates theirs")
    func live_dialogFollowsTheOtherSide() async throws {
        try await withLiveServer { server in
            // setup: Bob has a dialog with Ann open in the app
            let ann = try await server.walletUser("ann", phone: "+79160000001")
            _ = try await server.walletUser("bob", phone: "+79160000002")
            try await server.credit("+79160000002", "100")
            try await server.credit("+79160000001", "100")
            _ = try await ann.wallet.send(NewTransfer(to: PartyReference(tag: "bob"), amount: 1_00), intent: PaymentIntent())
            let (flow, _) = try await loggedIn(server, as: "bob")
            let home = try profile(flow)
            await home.load()
            home.payments()
            guard case .dialogs(let dialogs) = flow.state.screen else { throw LiveServerError("expected dialogs") }
            await dialogs.load()
            dialogs.open(try #require(dialogs.state.rows.first).id)
            guard case .dialog(let dialog) = flow.state.screen else { throw LiveServerError("expected dialog") }
            await dialog.load()
            #expect(dialog.state.items.count == 1)

            // MUT: Ann asks Bob for money from her own app
            let request = try await ann.wallet.ask(NewMoneyRequest(from: PartyReference(tag: "bob"), amount: 5_00, kind: .invoice), intent: PaymentIntent())

            // validate: Bob's open dialog shows the card with its actions, by itself
            let appeared = await eventually(within: .seconds(10)) { @MainActor in dialog.state.items.last?.requestID == request.id }
            #expect(appeared, "the request did not appear on the open dialog")
            let shown = try #require(dialog.state.items.last)
            #expect(shown.actions == [.confirm, .decline] && shown.requestState == "waiting")
            await dialog.act(.confirm, on: request.id)
            #expect(dialog.state.balance == "96.00 ₽")
            await flow.stopLive()
        }
    }

    @Test("the wallet's words exist in English and Russian, and Russian amounts use a comma")
    func strings_inBothLanguages() throws {
        let en = Localizer.keys("en").filter { $0.hasPrefix("wallet.") }
        let ru = Localizer.keys("ru").filter { $0.hasPrefix("wallet.") }
        #expect(!en.isEmpty && en == ru)
        #expect(WalletFormat.money(123_456_78, Localizer(language: "ru")) == "123\u{202F}456,78 ₽")
        #expect(WalletFormat.signed(-5, Localizer(language: "en")) == "−0.05 ₽")
        #expect(Kopecks.parse("1 234,5") == 123_450 && Kopecks.parse("1.2.3") == nil && Kopecks.parse(",5") == nil && Kopecks.parse("5,") == nil)
    }

    @Test("opening a money push lands on the dialog with the payer; a top-up's on the dialogs; a message's is not the wallet's")
    func openingAMoneyPush() async throws {
        try await withLiveServer { server in
            // setup
            _ = try await server.walletUser("ann", phone: "+79160000001")
            let bob = try await server.walletUser("bob", phone: "+79160000002")
            try await server.credit("+79160000002", "1000")
            let paid = try await bob.wallet.send(NewTransfer(to: PartyReference(tag: "ann"), amount: 25_050), intent: PaymentIntent())
            let (flow, _) = try await loggedIn(server, as: "ann")
            let profile = try profile(flow)
            await profile.load()
            profile.payments()

            // MUT
            let opened = await flow.open(.walletTransfer(paid.transfer.id))
            let screen = flow.state.screen
            let message = await flow.open(.chat(UUID(), message: nil))

            // validate
            #expect(opened && !message)
            guard case .dialog(let dialog) = screen else { Issue.record("not on a dialog: \(screen)"); return }
            #expect(dialog.chat.person.id == bob.id, "\(dialog.state.title)")
        }
    }
}
