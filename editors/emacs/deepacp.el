;;; deepacp.el --- deepacp's language server through eglot  -*- lexical-binding: t; -*-

;; Load this file (or copy it into your init) and run `M-x eglot' in a project file.
;; M-x deepacp-edit asks for a change (to the region, if active); the proposal shows as
;; diagnostics and code actions; M-x deepacp-accept / deepacp-reject decide all of it;
;; M-x deepacp-cancel stops a running edit (what it made so far is kept as a proposal).
;; Works with Emacs 28 (eglot from ELPA), 29 and 30.

(require 'cl-lib)
(require 'eglot)

(defclass deepacp-eglot-server (eglot-lsp-server) ()
  :documentation "deepacp's language server: its edits are applied after a yes, and
answered truthfully (`applied: false' when declined or when they fail).")

(add-to-list 'eglot-server-programs
             '((python-mode python-ts-mode js-mode typescript-mode rust-mode go-mode
                c-mode c++-mode java-mode)
               . (deepacp-eglot-server "deepacp" "lsp")))

(defvar deepacp-last-result nil "What the last `deepacp-edit' returned.")

(defun deepacp--path (uri)
  (funcall (if (fboundp 'eglot-uri-to-path) #'eglot-uri-to-path #'eglot--uri-to-path) uri))

(defun deepacp--text-edits (edit)
  "EDIT's text edits, as a list of (PATH EDITS VERSION)."
  (let ((documents (plist-get edit :documentChanges))
        (out nil))
    (if documents
        (seq-doseq (change documents)
          (let ((document (plist-get change :textDocument)))
            (when document              ; deepacp sends eglot no file operations
              (push (list (deepacp--path (plist-get document :uri))
                          (plist-get change :edits)
                          (plist-get document :version))
                    out))))
      (cl-loop for (uri edits) on (plist-get edit :changes) by #'cddr
               do (push (list (deepacp--path uri) edits nil) out)))
    (nreverse out)))

(defun deepacp--apply (edits)
  "Apply EDITS, a list of (PATH EDITS VERSION), each to its file's buffer (opened when
it is not), and send the changes to the server at once."
  (dolist (edit edits)
    (cl-destructuring-bind (path text-edits version) edit
      (with-current-buffer (find-file-noselect path)
        (eglot--apply-text-edits text-edits version)
        (when (bound-and-true-p eglot--managed-mode)
          (eglot--signal-textDocument/didChange))))))

;; Emacs 30's eglot, set to show a diff, applies nothing and still answers `applied: t';
;; older eglot answers an error when the user says no. deepacp's own edits (deepacp-accept)
;; ask here, apply on a yes, and say what happened.
(cl-defmethod eglot-handle-request
  ((_server deepacp-eglot-server) (_method (eql workspace/applyEdit)) &key label edit)
  "Ask, then apply deepacp's EDIT; answer whether it was applied."
  (let ((edits (deepacp--text-edits edit)))
    (if (not (y-or-n-p
              (format "%s: apply %s? "
                      (or label "deepacp")
                      (mapconcat (lambda (e)
                                   (let ((n (length (nth 1 e))))
                                     (format "%d change%s to %s" n (if (= n 1) "" "s")
                                             (file-relative-name (car e)))))
                                 edits ", "))))
        (list :applied :json-false :failureReason "declined in Emacs")
      (condition-case err
          (progn (deepacp--apply edits) (list :applied t))
        (error (list :applied :json-false
                     :failureReason (error-message-string err)))))))

(defun deepacp--command (command arguments &optional then)
  "Run deepacp's COMMAND with ARGUMENTS without blocking Emacs; call THEN with the result."
  (eglot--signal-textDocument/didChange)  ; the server must see what was just typed
  (jsonrpc-async-request
   (eglot--current-server-or-lose) :workspace/executeCommand
   (list :command command :arguments (vconcat arguments))
   :success-fn (or then #'ignore)
   :error-fn (lambda (error) (message "deepacp: %s" (plist-get error :message)))
   :timeout 3600))

(defun deepacp-edit (instruction)
  "Ask deepacp for INSTRUCTION on this file (or the active region)."
  (interactive "sdeepacp: ")
  (let ((args (list :uri (eglot--path-to-uri (buffer-file-name)) :instruction instruction)))
    (when (use-region-p)
      (setq args (plist-put args :range
                            (list :start (list :line (1- (line-number-at-pos (region-beginning))) :character 0)
                                  :end (list :line (1- (line-number-at-pos (region-end))) :character 0)))))
    (message "deepacp: working on it...")
    ;; The server tells the user how the edit went (window/showMessage).
    (deepacp--command "deepacp.edit" (list args)
                      (lambda (result) (setq deepacp-last-result result)))))

(defun deepacp-accept ()
  "Accept the whole last proposal: Emacs asks, then applies it to the buffers."
  (interactive)
  (deepacp--command "deepacp.acceptProposal" (list (plist-get deepacp-last-result :proposal))))

(defun deepacp-reject ()
  "Reject the last proposal."
  (interactive)
  (deepacp--command "deepacp.rejectProposal" (list (plist-get deepacp-last-result :proposal))))

(defun deepacp-cancel ()
  "Stop the running edits; what they proposed so far is kept, marked partial."
  (interactive)
  (deepacp--command "deepacp.cancel" nil))

(provide 'deepacp)
;;; deepacp.el ends here
