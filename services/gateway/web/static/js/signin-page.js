// The page the OIDC provider sends the browser back to: redeem its code, then go back.
import "./common.js";
import { finishSignIn } from "./signin.js";

finishSignIn(document.getElementById("sign-in-status"));
