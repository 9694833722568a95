import Foundation
import GatehouseAPI
import GatehouseKit
import GatehouseScreens

/// The messenger in a full-screen terminal: the tab bar, each tab's pushed screens, the chat
/// updating live. It draws the view models' states and forwards keys to their actions; what
/// it keeps itself is only where the cursor is (the part UIKit's table views keep).
@MainActor
final class MessengerTerminal {
    private let main: MessengerMainViewModel
    private let ru: Bool
    private let screen = FullScreen()
    private var cursors: [ObjectIdentifier: Int] = [:]
    /// A list's search field takes the keys.
    private var typing = false
    private var chatFocus: ChatFocus = .composer
    private var shown: ObjectIdentifier?
    private var quitRequested = false
    /// What the last opened attachment came to ("saved to …"), shown on the profile.
    private var openedNote: String?

    private enum ChatFocus: Equatable { case composer, messages(Int) }

    init(main: MessengerMainViewModel, language: String) {
        self.main = main
        self.ru = language == "ru"
    }

    private func t(_ en: String, _ ru: String) -> String { self.ru ? ru : en }

    /// Runs until logout (false) or until the user quits (true).
    func run(isSignedIn: @escaping @MainActor () -> Bool) async -> Bool {
        screen.enter()
        defer { screen.leave() }
        let ticker = Task { @MainActor [weak self] in
            while !Task.isCancelled {
                guard let self else { return }
                if !isSignedIn() { self.screen.leave(); return }
                self.appearIfNeeded()
                self.screen.draw(self.frame())
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        defer { ticker.cancel() }
        screen.draw(frame())
        for await key in screen.keys {
            if key == .end || key == .ctrl("c") { quitRequested = true; break }
            await handle(key)
            if quitRequested || !isSignedIn() { break }
            appearIfNeeded()
            screen.draw(frame())
        }
        return quitRequested
    }

    /// A screen that just came on top is told so (its `appear()`), as a view controller would.
    private func appearIfNeeded() {
        let top = main.top?.model
        let id = top.map(ObjectIdentifier.init)
        guard id != shown else { return }
        if let previous = shown, let chat = lastChat, ObjectIdentifier(chat) == previous { chat.disappear() }
        shown = id
        typing = false
        chatFocus = .composer
        switch main.top {
        case .chat(let chat)?:
            lastChat = chat
            Task { await chat.appear() }
        case .person(let person)?:
            Task { await person.appear() }
        default: break
        }
    }

    private var lastChat: ChatViewModel?

    // MARK: Cursor

    private func cursor(_ model: AnyObject, count: Int) -> Int {
        let value = cursors[ObjectIdentifier(model)] ?? 0
        return count == 0 ? 0 : min(max(value, 0), count - 1)
    }

    private func move(_ model: AnyObject, by delta: Int, count: Int) {
        cursors[ObjectIdentifier(model)] = count == 0 ? 0 : min(max(cursor(model, count: count) + delta, 0), count - 1)
    }

    private func mark(_ selected: Bool) -> String { selected ? "> " : "  " }

    // MARK: Frame

    private func frame() -> [String] {
        var lines: [String] = []
        let state = main.state
        let tabs = MessengerMainViewModel.Tab.allCases.map { tab -> String in
            var title = state.tabTitles[tab] ?? tab.rawValue
            if tab == .chats, state.unreadChats > 0 { title += " (\(state.unreadChats))" }
            if tab == .friends, state.incomingRequests > 0 { title += " (\(state.incomingRequests))" }
            return tab == state.selectedTab ? "[\(title)]" : " \(title) "
        }
        lines.append(" OneOnOne   " + tabs.joined(separator: "│"))
        if let notice = state.connectivityNotice { lines.append(" ! " + notice) }
        lines.append(String(repeating: "─", count: min(screen.size.columns, 100)))
        var help: String
        switch main.top {
        case nil:
            switch state.selectedTab {
            case .friends: (lines, help) = (lines + friendsLines(), t("←/→ tabs  ↑/↓ move  Enter open  / search  s sort  + find people  q quit",
                                                                         "←/→ вкладки  ↑/↓ выбор  Enter открыть  / поиск  s сортировка  + найти  q выход"))
            case .chats: (lines, help) = (lines + chatsLines(), t("←/→ tabs  ↑/↓ move  Enter open  / search  + new chat  d delete  q quit",
                                                                     "←/→ вкладки  ↑/↓ выбор  Enter открыть  / поиск  + новый чат  d удалить  q выход"))
            case .profile: (lines, help) = (lines + profileLines(), t("←/→ tabs  ↑/↓ move  Enter open  q quit", "←/→ вкладки  ↑/↓ выбор  Enter открыть  q выход"))
            }
        case .peopleSearch(let m)?: (lines, help) = (lines + peopleLines(m), t("type to search  ↑/↓ move  Enter open  Esc back", "печатайте для поиска  ↑/↓ выбор  Enter открыть  Esc назад"))
        case .person(let m)?: (lines, help) = (lines + personLines(m), t("↑/↓ move  Enter choose  Esc back", "↑/↓ выбор  Enter выбрать  Esc назад"))
        case .chat(let m)?: (lines, help) = (lines + chatLines(m), chatHelp())
        case .newChat(let m)?: (lines, help) = (lines + pickerLines(m), t("type to search  ↑/↓ move  Enter write  Esc back", "поиск  ↑/↓ выбор  Enter написать  Esc назад"))
        case .forward(let m)?: (lines, help) = (lines + forwardLines(m), t("↑/↓ move  Space pick  Enter send  Esc back", "↑/↓ выбор  Пробел отметить  Enter отправить  Esc назад"))
        case .editProfile(let m)?: (lines, help) = (lines + editLines(m), t("↑/↓ move  type to edit  Enter choose  Esc back", "↑/↓ выбор  печатайте  Enter выбрать  Esc назад"))
        case .privacy(let m)?: (lines, help) = (lines + privacyLines(m), t("↑/↓ move  Enter choose  Esc back", "↑/↓ выбор  Enter выбрать  Esc назад"))
        case .theme(let m)?: (lines, help) = (lines + themeLines(m), t("↑/↓ move  Enter choose  Esc back", "↑/↓ выбор  Enter выбрать  Esc назад"))
        case .deleteAccount(let m)?: (lines, help) = (lines + deleteLines(m), t("type the password  Enter delete  Esc cancel",
                                                                                "введите пароль  Enter удалить  Esc отмена"))
        }
        let rows = screen.size.rows
        if lines.count > rows - 2 { lines = Array(lines.prefix(3)) + Array(lines.suffix(rows - 5)) }
        while lines.count < rows - 2 { lines.append("") }
        lines.append(String(repeating: "─", count: min(screen.size.columns, 100)))
        lines.append(" " + help)
        return lines
    }

    private func searchLine(_ placeholder: String, _ query: String, focused: Bool) -> String {
        " 🔍 " + (query.isEmpty && !focused ? placeholder : query + (focused ? "▏" : ""))
    }

    private func person(_ row: PersonRow) -> String { "\(row.name)  \(row.tag)" }

    private func friendsLines() -> [String] {
        let state = main.friends.state
        var lines = [searchLine(state.searchPlaceholder, state.query, focused: typing),
                     " " + state.sortOptions.map { $0.sort == state.sort ? "(•) \($0.title)" : "( ) \($0.title)" }.joined(separator: "  "), ""]
        let rows = state.sections.flatMap(\.rows)
        let selected = cursor(main.friends, count: rows.count)
        var index = 0
        for section in state.sections {
            lines.append(" \(section.title)")
            for row in section.rows {
                lines.append(" " + mark(index == selected && !typing) + person(row))
                index += 1
            }
        }
        if let empty = state.emptyMessage { lines.append(" " + empty) }
        return lines
    }

    private func chatsLines() -> [String] {
        let state = main.chats.state
        var lines = [searchLine(state.searchPlaceholder, state.query, focused: typing), ""]
        if let confirmation = state.confirmation {
            return lines + [" " + confirmation.title, " " + (confirmation.message ?? ""), " y) \(confirmation.confirmTitle)   n) \(confirmation.cancelTitle)"]
        }
        let selected = cursor(main.chats, count: state.rows.count)
        for (index, row) in state.rows.enumerated() {
            lines.append(" " + mark(index == selected && !typing) + (row.isUnread ? "● " : "  ") + row.person.name + "   " + row.time)
            lines.append("       " + row.lastMessage)
        }
        if let empty = state.emptyMessage { lines.append(" " + empty) }
        if let error = state.errorMessage { lines.append(" ! " + error) }
        return lines
    }

    private func profileLines() -> [String] {
        let state = main.profile.state
        var lines = [" " + state.title, " " + state.name + "  " + state.tag, " " + state.email, ""]
        if let confirmation = state.confirmation {
            return lines + [" " + confirmation.title, " " + (confirmation.message ?? ""), " y) \(confirmation.confirmTitle)   n) \(confirmation.cancelTitle)"]
        }
        let selected = cursor(main.profile, count: state.settings.count)
        for (index, row) in state.settings.enumerated() {
            lines.append(" " + mark(index == selected) + row.title + (row.value.map { ": " + $0 } ?? ""))
        }
        return lines
    }

    private func peopleLines(_ m: PeopleSearchViewModel) -> [String] {
        let state = m.state
        var lines = [" " + state.title, searchLine(state.searchPlaceholder, state.query, focused: true), ""]
        let selected = cursor(m, count: state.rows.count)
        for (index, row) in state.rows.enumerated() { lines.append(" " + mark(index == selected) + person(row)) }
        if state.isLoading { lines.append(" …") }
        if let empty = state.emptyMessage { lines.append(" " + empty) }
        if let error = state.errorMessage { lines.append(" ! " + error) }
        return lines
    }

    /// The profile's choices: its buttons, "Write a message", then the chat's attachments (Enter opens one).
    private func personChoices(_ m: PersonProfileViewModel) -> [String] {
        m.state.actions.map(\.title) + [m.state.messageTitle] + m.state.attachments.map { "📎 " + $0.fileName + "  " + $0.details }
    }

    private func personLines(_ m: PersonProfileViewModel) -> [String] {
        let state = m.state
        var lines = [" " + state.person.name, " " + state.person.tag]
        if let relation = state.relationText { lines.append(" " + relation) }
        lines.append("")
        if let confirmation = state.confirmation {
            return lines + [" " + confirmation.title, " y) \(confirmation.confirmTitle)   n) \(confirmation.cancelTitle)"]
        }
        let choices = personChoices(m)
        let selected = cursor(m, count: choices.count)
        let buttons = state.actions.count + 1
        for (index, title) in choices.enumerated() {
            if index == buttons, let heading = state.attachmentsTitle {
                lines.append("")
                lines.append(" " + heading + t("  (Enter opens)", "  (Enter открывает)"))
            }
            lines.append(" " + mark(index == selected) + title)
        }
        if let note = openedNote { lines.append(" ✓ " + note) }
        if let error = state.errorMessage { lines.append(" ! " + error) }
        return lines
    }

    private func chatHelp() -> String {
        switch chatFocus {
        case .composer: t("type  Enter send  /attach PATH a file  ↑ pick a message  Tab profile  Esc back",
                          "печатайте  Enter отправить  /attach ПУТЬ файл  ↑ выбрать сообщение  Tab профиль  Esc назад")
        case .messages: t("↑/↓ move  Enter menu  PgUp older  Esc to the composer", "↑/↓ выбор  Enter меню  PgUp раньше  Esc к полю ввода")
        }
    }

    private func messageIDs(_ m: ChatViewModel) -> [UUID] {
        m.state.items.compactMap { if case .message(let row) = $0 { row.id } else { nil } }
    }

    private func chatLines(_ m: ChatViewModel) -> [String] {
        let state = m.state
        let width = min(screen.size.columns, 100)
        var lines = [" " + state.title + "   " + state.person.tag]
        if state.canLoadOlder { lines.append(t("   ↑ older messages: PgUp", "   ↑ ранние сообщения: PgUp")) }
        let ids = messageIDs(m)
        let selectedID: UUID? = if case .messages(let index) = chatFocus, ids.indices.contains(index) { ids[index] } else { nil }
        for item in state.items {
            switch item {
            case .day(let day):
                lines.append(String(repeating: " ", count: max(0, (width - day.count) / 2 - 2)) + "── " + day + " ──")
            case .message(let row):
                var block: [String] = []
                if let forwarded = row.forwardedFrom { block.append("↪ " + forwarded) }
                if let quote = row.quote { block.append("┆ \(quote.author): \(quote.text)") }
                block.append(row.text + (row.isEdited ? t("  (edited)", "  (изменено)") : ""))
                for name in row.attachments { block.append("📎 " + name) }
                if let upload = row.uploadText { block.append("⇡ " + upload) }
                block.append(row.time + (row.deliveryText.map { "  " + $0 } ?? ""))
                let marker = row.id == selectedID ? ">" : " "
                for (index, line) in block.enumerated() {
                    let lead = index == 0 ? marker : " "
                    if row.isMine {
                        lines.append(lead + String(repeating: " ", count: max(1, width - 2 - line.count)) + line)
                    } else {
                        lines.append(lead + " " + line)
                    }
                }
            }
        }
        if let empty = state.emptyMessage { lines.append(" " + empty) }
        if state.selected != nil {
            lines.append("")
            let selected = cursor(m, count: state.actions.count)
            for (index, action) in state.actions.enumerated() { lines.append(" " + mark(index == selected) + action.title) }
        }
        if let error = state.errorMessage { lines.append(" ! " + error) }
        if let title = state.composerTitle { lines.append(" ✎ " + title + t("  (Esc cancels)", "  (Esc отменяет)")) }
        for file in state.draftFiles { lines.append(" 📎 " + file.fileName + "  " + file.size) }
        let caret = chatFocus == .composer && state.selected == nil ? "▏" : ""
        lines.append(" ✉ " + (state.draft.isEmpty && caret.isEmpty ? state.placeholder : state.draft + caret))
        return lines
    }

    private func pickerLines(_ m: FriendPickerViewModel) -> [String] {
        let state = m.state
        var lines = [" " + state.title, searchLine(state.searchPlaceholder, state.query, focused: true), ""]
        let selected = cursor(m, count: state.rows.count)
        for (index, row) in state.rows.enumerated() { lines.append(" " + mark(index == selected) + person(row)) }
        if let empty = state.emptyMessage { lines.append(" " + empty) }
        if let error = state.errorMessage { lines.append(" ! " + error) }
        return lines
    }

    private func forwardLines(_ m: ForwardPickerViewModel) -> [String] {
        let state = m.state
        var lines = [" " + state.title, ""]
        let selected = cursor(m, count: state.rows.count)
        for (index, row) in state.rows.enumerated() { lines.append(" " + mark(index == selected) + (row.isSelected ? "[x] " : "[ ] ") + row.person.name) }
        lines.append("")
        lines.append(" " + state.sendTitle + (state.isSendEnabled ? " (Enter)" : ""))
        if let error = state.errorMessage { lines.append(" ! " + error) }
        return lines
    }

    /// The edit screen's rows: fields (typed into) and buttons (Enter).
    private enum EditRow { case firstName, lastName, tag, save, changeEmail, newEmail, password, sendCode, code, confirm, cancelEmail }

    private func editRows(_ m: EditProfileViewModel) -> [EditRow] {
        var rows: [EditRow] = [.firstName, .lastName, .tag, .save]
        switch m.state.emailStep {
        case .idle: rows.append(.changeEmail)
        case .form: rows += [.newEmail, .password, .sendCode, .cancelEmail]
        case .code: rows += [.code, .confirm, .cancelEmail]
        }
        return rows
    }

    private func editLines(_ m: EditProfileViewModel) -> [String] {
        let state = m.state
        let label = { (key: String) in state.labels[key] ?? key }
        let rows = editRows(m)
        let selected = cursor(m, count: rows.count)
        var lines = [" " + state.title, ""]
        for (index, row) in rows.enumerated() {
            let text: String = switch row {
            case .firstName: label("firstName") + ": " + state.firstName
            case .lastName: label("lastName") + ": " + state.lastName
            case .tag: label("tag") + ": " + state.tag + (state.tagMessage.map { "   " + $0 } ?? "")
            case .save: "[" + state.saveTitle + "]" + (state.isSaveEnabled ? "" : t(" (nothing to save)", " (нечего сохранять)"))
            case .changeEmail: label("email") + ": " + state.email + "   [" + label("changeEmail") + "]"
            case .newEmail: label("newEmail") + ": " + state.newEmail
            case .password: label("currentPassword") + ": " + String(repeating: "*", count: state.currentPassword.count)
            case .sendCode: "[" + label("sendCode") + "]"
            case .code: (state.code?.prompt ?? "") + "  " + (state.code?.code ?? "")
            case .confirm: "[" + label("confirm") + "]"
            case .cancelEmail: "[" + t("Cancel", "Отмена") + "]"
            }
            lines.append(" " + mark(index == selected) + text)
        }
        if let info = state.infoMessage { lines.append(" ℹ " + info) }
        if let error = state.errorMessage { lines.append(" ! " + error) }
        return lines
    }

    private func privacyLines(_ m: PrivacyViewModel) -> [String] {
        let state = m.state
        let selected = cursor(m, count: state.options.count)
        return [" " + state.title, " " + state.caption, ""]
            + state.options.enumerated().map { " " + mark($0.offset == selected) + ($0.element.isSelected ? "(•) " : "( ) ") + $0.element.title }
            + (state.errorMessage.map { [" ! " + $0] } ?? [])
    }

    private func themeLines(_ m: ThemeViewModel) -> [String] {
        let state = m.state
        let selected = cursor(m, count: state.options.count)
        return [" " + state.title, ""]
            + state.options.enumerated().map { " " + mark($0.offset == selected) + ($0.element.isSelected ? "(•) " : "( ) ") + $0.element.title }
    }

    // MARK: Keys

    private func handle(_ key: Key) async {
        switch main.top {
        case nil: await rootKey(key)
        case .peopleSearch(let m)?:
            switch key {
            case .escape: m.back()
            case .up, .down: move(m, by: key == .up ? -1 : 1, count: m.state.rows.count)
            case .enter: if m.state.rows.indices.contains(cursor(m, count: m.state.rows.count)) { m.open(m.state.rows[cursor(m, count: m.state.rows.count)].id) }
            default: if let query = edited(m.state.query, key) { m.setQuery(query); await m.settle() }
            }
        case .person(let m)?:
            if m.state.confirmation != nil {
                if key == .char("y") { await m.confirm() } else if key == .char("n") || key == .escape { m.cancelConfirmation() }
                return
            }
            let choices = personChoices(m)
            switch key {
            case .escape: m.back()
            case .up, .down: move(m, by: key == .up ? -1 : 1, count: choices.count)
            case .enter:
                let index = cursor(m, count: choices.count)
                let buttons = m.state.actions.count
                if index < buttons { await m.perform(m.state.actions[index].action) }
                else if index == buttons { await m.writeMessage() }
                else if m.state.attachments.indices.contains(index - buttons - 1) { await open(m, m.state.attachments[index - buttons - 1].id) }
            default: break
            }
        case .chat(let m)?: await chatKey(m, key)
        case .newChat(let m)?:
            switch key {
            case .escape: m.back()
            case .up, .down: move(m, by: key == .up ? -1 : 1, count: m.state.rows.count)
            case .enter: if m.state.rows.indices.contains(cursor(m, count: m.state.rows.count)) { await m.pick(m.state.rows[cursor(m, count: m.state.rows.count)].id) }
            default: if let query = edited(m.state.query, key) { m.setQuery(query) }
            }
        case .forward(let m)?:
            switch key {
            case .escape: m.back()
            case .up, .down: move(m, by: key == .up ? -1 : 1, count: m.state.rows.count)
            case .space: if m.state.rows.indices.contains(cursor(m, count: m.state.rows.count)) { m.toggle(m.state.rows[cursor(m, count: m.state.rows.count)].id) }
            case .enter: await m.send()
            default: break
            }
        case .editProfile(let m)?: await editKey(m, key)
        case .deleteAccount(let m)?: await deleteKey(m, key)
        case .privacy(let m)?:
            switch key {
            case .escape: m.back()
            case .up, .down: move(m, by: key == .up ? -1 : 1, count: m.state.options.count)
            case .enter: await m.choose(m.state.options[cursor(m, count: m.state.options.count)].audience)
            default: break
            }
        case .theme(let m)?:
            switch key {
            case .escape: m.back()
            case .up, .down: move(m, by: key == .up ? -1 : 1, count: m.state.options.count)
            case .enter: m.choose(m.state.options[cursor(m, count: m.state.options.count)].theme)
            default: break
            }
        }
    }

    /// A text field's new value after `key`, or nil when the key is not typing.
    private func edited(_ text: String, _ key: Key) -> String? {
        switch key {
        case .char(let character): text + String(character)
        case .space: text + " "
        case .backspace: String(text.dropLast())
        case .ctrl("u"): ""
        default: nil
        }
    }

    private func rootKey(_ key: Key) async {
        let tab = main.state.selectedTab
        if typing {
            switch key {
            case .enter, .escape: typing = false
            default:
                if tab == .friends, let query = edited(main.friends.state.query, key) { main.friends.setQuery(query) }
                if tab == .chats, let query = edited(main.chats.state.query, key) { main.chats.setQuery(query) }
            }
            return
        }
        if tab == .chats, main.chats.state.confirmation != nil {
            if key == .char("y") { await main.chats.confirmDelete() } else if key == .char("n") || key == .escape { main.chats.cancelDelete() }
            return
        }
        if tab == .profile, main.profile.state.confirmation != nil {
            if key == .char("y") { await main.profile.confirmLogout() } else if key == .char("n") || key == .escape { main.profile.cancelLogout() }
            return
        }
        let tabs = MessengerMainViewModel.Tab.allCases
        switch key {
        case .left, .right:
            let index = tabs.firstIndex(of: tab)! + (key == .left ? -1 : 1)
            if tabs.indices.contains(index) { main.select(tabs[index]) }
        case .char("q"): quitRequested = true
        case .char("/") where tab != .profile: typing = true
        default:
            switch tab {
            case .friends:
                let rows = main.friends.state.sections.flatMap(\.rows)
                switch key {
                case .up, .down: move(main.friends, by: key == .up ? -1 : 1, count: rows.count)
                case .enter: if rows.indices.contains(cursor(main.friends, count: rows.count)) { main.friends.open(rows[cursor(main.friends, count: rows.count)].id) }
                case .char("s"): main.friends.setSort(main.friends.state.sort == .name ? .tag : .name)
                case .char("+"): main.friends.add()
                default: break
                }
            case .chats:
                let rows = main.chats.state.rows
                let index = cursor(main.chats, count: rows.count)
                switch key {
                case .up, .down: move(main.chats, by: key == .up ? -1 : 1, count: rows.count)
                case .enter: if rows.indices.contains(index) { main.chats.open(rows[index].id) }
                case .char("d"): if rows.indices.contains(index) { main.chats.requestDelete(rows[index].id) }
                case .char("+"): main.chats.newChat()
                default: break
                }
            case .profile:
                let settings = main.profile.state.settings
                switch key {
                case .up, .down: move(main.profile, by: key == .up ? -1 : 1, count: settings.count)
                case .enter: main.profile.open(settings[cursor(main.profile, count: settings.count)].item)
                default: break
                }
            }
        }
    }

    private func chatKey(_ m: ChatViewModel, _ key: Key) async {
        if m.state.selected != nil {
            let count = m.state.actions.count
            switch key {
            case .up, .down: move(m, by: key == .up ? -1 : 1, count: count)
            case .enter:
                let action = m.state.actions[cursor(m, count: count)].action
                cursors[ObjectIdentifier(m)] = 0
                m.perform(action)
                chatFocus = .composer
            case .escape: m.dismissMenu()
            default: break
            }
            return
        }
        let ids = messageIDs(m)
        switch chatFocus {
        case .messages(let index):
            switch key {
            case .up:
                if index > 0 { chatFocus = .messages(index - 1) } else { await m.loadOlder() }
            case .down: chatFocus = index + 1 < ids.count ? .messages(index + 1) : .composer
            case .pageUp: await m.loadOlder()
            case .enter:
                if ids.indices.contains(index) {
                    cursors[ObjectIdentifier(m)] = 0
                    m.select(ids[index])
                }
            case .escape: chatFocus = .composer
            default: break
            }
        case .composer:
            switch key {
            case .enter where m.state.draft.hasPrefix("/attach "):
                // The terminal's file picker: a path typed after /attach.
                attach(String(m.state.draft.dropFirst("/attach ".count)), to: m)
            case .enter: m.send()
            case .up: if !ids.isEmpty { chatFocus = .messages(ids.count - 1) }
            case .pageUp: await m.loadOlder()
            case .tab: m.openProfile()
            case .escape:
                if m.state.composer != .new { m.cancelComposer() } else { m.back() }
            default: if let draft = edited(m.state.draft, key) { m.setDraft(draft) }
            }
        }
    }

    /// Reads a file by path and gives it to the chat's "Attach" (an app's picker gives the same: bytes, a name, a type).
    private func attach(_ path: String, to m: ChatViewModel) {
        let path = (path.trimmingCharacters(in: .whitespaces) as NSString).expandingTildeInPath
        m.setDraft("")
        guard let data = FileManager.default.contents(atPath: path) else {
            return m.setDraft(t("cannot read ", "не читается ") + path)
        }
        m.attach(data, fileName: (path as NSString).lastPathComponent, contentType: Self.contentType(ofFile: path))
    }

    /// A file's type by its extension, as a picker would tell it.
    static func contentType(ofFile path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "png": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "pdf": "application/pdf"
        case "txt", "md": "text/plain"
        case "json": "application/json"
        default: "application/octet-stream"
        }
    }

    /// Opens an attachment from the profile: the terminal saves its bytes under downloads/ in the
    /// working folder (where an app would show it) and says where.
    private func open(_ m: PersonProfileViewModel, _ attachment: UUID) async {
        openedNote = nil
        m.onOpenAttachment = { [weak self] file in
            guard let self else { return }
            let folder = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("downloads")
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let target = folder.appendingPathComponent((file.fileName as NSString).lastPathComponent)
            do {
                try file.data.write(to: target)
                openedNote = t("saved to \(target.path) (\(file.data.count) bytes)", "сохранено в \(target.path) (\(file.data.count) байт)")
            } catch {
                openedNote = t("cannot save: \(error)", "не сохраняется: \(error)")
            }
        }
        await m.open(attachment)
    }

    private func deleteLines(_ m: DeleteAccountViewModel) -> [String] {
        let state = m.state
        var lines = [" " + state.title, ""]
        lines += wrap(state.message, width: min(screen.size.columns, 100) - 2).map { " " + $0 }
        lines += ["", " " + state.passwordLabel + ": " + String(repeating: "*", count: state.password.count),
                  " [" + state.confirmTitle + "]" + (state.isConfirmEnabled ? "" : t(" (type the password)", " (введите пароль)"))]
        if state.isLoading { lines.append(" …") }
        if let error = state.errorMessage { lines.append(" ! " + error) }
        return lines
    }

    /// Words of `text` in lines of at most `width` characters.
    private func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = [], line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + word.count + 1 > max(width, 20) { lines.append(line); line = "" }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    private func deleteKey(_ m: DeleteAccountViewModel, _ key: Key) async {
        switch key {
        case .escape: m.cancel()
        case .enter: await m.confirm()
        default: if let text = edited(m.state.password, key) { m.setPassword(text) }
        }
    }

    private func editKey(_ m: EditProfileViewModel, _ key: Key) async {
        let rows = editRows(m)
        let row = rows[cursor(m, count: rows.count)]
        switch key {
        case .escape: m.back(); return
        case .up, .down: move(m, by: key == .up ? -1 : 1, count: rows.count); return
        case .enter:
            switch row {
            case .save: await m.save()
            case .changeEmail: m.startEmailChange()
            case .sendCode: await m.requestEmailCode()
            case .confirm: await m.confirmEmail()
            case .cancelEmail: m.cancelEmailChange()
            default: move(m, by: 1, count: rows.count)
            }
            return
        default: break
        }
        let state = m.state
        switch row {
        case .firstName: if let text = edited(state.firstName, key) { m.setFirstName(text) }
        case .lastName: if let text = edited(state.lastName, key) { m.setLastName(text) }
        case .tag: if let text = edited(state.tag, key) { m.setTag(text); await m.settleTagCheck() }
        case .newEmail: if let text = edited(state.newEmail, key) { m.setNewEmail(text) }
        case .password: if let text = edited(state.currentPassword, key) { m.setCurrentPassword(text) }
        case .code: if let text = edited(state.code?.code ?? "", key) { m.setCode(text) }
        default: break
        }
    }
}
